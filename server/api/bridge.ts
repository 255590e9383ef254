import { Router } from 'express';
import { parseBridgeEvent, type Recorder } from '../runs/index.ts';

/** `POST /api/bridge/events`: one event per request, validated here, answered by the bridge. */
export function bridgeRouter(recorder: Recorder): Router {
  const router = Router();
  router.post('/bridge/events', async (req, res) => {
    const event = parseBridgeEvent(req.body);
    res.json(await recorder.handle(event));
  });
  return router;
}
