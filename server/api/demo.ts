import { Router } from 'express';
import { z } from 'zod';
import { httpBridgeSender } from '../bridge-client/index.ts';
import { playDemo } from '../demo/index.ts';
import { AppError } from '../errors.ts';
import type { SecurityPolicy } from '../security/index.ts';

/** The answer of `POST /api/demo`: the session the demo plays into. */
export interface DemoStartResponse {
  session_id: string;
  /** True when a demo was already playing and this request joined it instead of starting another. */
  already_running: boolean;
}

export interface DemoRouterDeps {
  policy: SecurityPolicy;
  log?: (message: string) => void;
  /** Pause between the demo's steps (ms); the request body's `pause_ms` overrides it. Default 700. */
  pauseMs?: number;
}

const bodySchema = z
  .object({
    /** Pause between steps in ms (0 plays as fast as the server answers; tests use it). */
    pause_ms: z.number().int().min(0).max(5_000).optional(),
  })
  .strict();

const urlHost = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/**
 * The server's own base URL as an external client would dial it: the bound address (a wildcard bind
 * is reachable locally through itself, and the Host check accepts exactly that name) and the port.
 */
export function ownUrl(policy: SecurityPolicy): string {
  return `http://${urlHost(policy.bindHost)}:${policy.port()}`;
}

/**
 * `POST /api/demo`: plays the scripted demo session through this server's own public HTTP bridge,
 * exactly as an external runtime would, and answers `{session_id}` as soon as the session exists
 * (the rest plays on, live). One demo plays at a time: a request while one is playing joins it
 * (`already_running: true`), so a double click or a second tab watches the same session.
 */
export function demoRouter(deps: DemoRouterDeps): Router {
  const log = deps.log ?? (() => {});
  const router = Router();
  // The playing demo's session id, settled once its session exists.
  let playing: Promise<string> | null = null;

  router.post('/demo', async (req, res) => {
    const parsed = bodySchema.safeParse(req.body ?? {});
    if (!parsed.success) {
      throw new AppError('invalid_input', 'the demo request takes at most {"pause_ms": 0..5000}', {
        details: { issues: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`) },
      });
    }
    if (playing) {
      const body: DemoStartResponse = { session_id: await playing, already_running: true };
      res.json(body);
      return;
    }
    const started = new Promise<string>((resolve, reject) => {
      playDemo({
        send: httpBridgeSender(ownUrl(deps.policy), deps.policy.token),
        pauseMs: parsed.data.pause_ms ?? deps.pauseMs ?? 700,
        onSession: (sessionId) => resolve(sessionId),
      })
        .then(
          (result) => log(`demo session ${result.sessionId} played (workspace ${result.workspace})`),
          (err: unknown) => {
            log(`demo stopped: ${(err as Error).message}`);
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        )
        .finally(() => {
          if (playing === started) playing = null;
        });
    });
    playing = started;
    let sessionId: string;
    try {
      sessionId = await started;
    } catch (err) {
      throw new AppError('internal', `the demo could not start: ${(err as Error).message}`);
    }
    const body: DemoStartResponse = { session_id: sessionId, already_running: false };
    res.json(body);
  });
  return router;
}
