import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../errors.ts';

/**
 * The server's access rules as pure checks shared by express and every socket.io request:
 * the Host header (against DNS rebinding), the Origin (against cross-site requests) and the token.
 */
export interface SecurityPolicy {
  /** The address the server is bound to (`--host`). */
  bindHost: string;
  /** Extra accepted Host names (`RUNDIFF_ALLOWED_HOSTS`), lower case, with or without `:port`. */
  allowedHosts: readonly string[];
  token: string | null;
  /** The port actually listened on (known after listen when the configured port is 0). */
  port(): number;
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** `::1` and `[::1]` both become `[::1]`, as a Host header writes it. */
function bracketed(host: string): string {
  const h = host.toLowerCase();
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}

export function isLoopbackHost(host: string): boolean {
  const h = bracketed(host);
  return LOOPBACK_NAMES.has(h) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Splits a Host header into a lower-case name and a port (null when absent). */
export function parseHostHeader(value: string): { name: string; port: number | null } | null {
  const v = value.trim().toLowerCase();
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(v);
  if (!m) return null;
  return { name: m[1]!, port: m[2] === undefined ? null : Number(m[2]) };
}

export function isAllowedHost(hostHeader: string | undefined, policy: SecurityPolicy): boolean {
  if (!hostHeader) return false;
  const host = parseHostHeader(hostHeader);
  if (!host) return false;
  const port = policy.port();
  const samePort = host.port === port || (host.port === null && port === 80);
  // RUNDIFF_ALLOWED_HOSTS: `name` accepts any port (a proxy in front), `name:port` that port only.
  for (const entry of policy.allowedHosts) {
    if (entry === host.name || entry === `${host.name}:${host.port ?? 80}`) return true;
  }
  const bind = bracketed(policy.bindHost);
  if (isLoopbackHost(policy.bindHost)) return samePort && (LOOPBACK_NAMES.has(host.name) || host.name === bind);
  return samePort && host.name === bind;
}

/** No Origin is fine (curl, agents); otherwise it must be this server's own origin. */
export function isAllowedOrigin(origin: string | undefined, hostHeader: string | undefined): boolean {
  if (origin === undefined) return true;
  if (!hostHeader) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // includes the opaque origin "null"
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const own = new URL(`${url.protocol}//${hostHeader.trim()}`);
  return url.host === own.host;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Constant-time comparison of a presented token with the configured one. */
export function tokenMatches(presented: string | undefined | null, policy: SecurityPolicy): boolean {
  if (policy.token === null) return true;
  if (typeof presented !== 'string' || presented === '') return false;
  return timingSafeEqual(digest(presented), digest(policy.token));
}

export function bearerToken(authorization: string | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return m ? m[1]! : null;
}

/** The Host and Origin checks every request and handshake passes; the error to answer, or null. */
export function checkHostAndOrigin(headers: IncomingHttpHeaders, policy: SecurityPolicy): AppError | null {
  if (!isAllowedHost(headers.host, policy)) {
    return new AppError(
      'forbidden_origin',
      `Host ${JSON.stringify(headers.host ?? '')} is not accepted by this server`,
      {
        hint: isLoopbackHost(policy.bindHost)
          ? 'use http://127.0.0.1, http://localhost or http://[::1] with the server port, or add the name to RUNDIFF_ALLOWED_HOSTS'
          : 'use the --host address or add the name to RUNDIFF_ALLOWED_HOSTS',
      },
    );
  }
  const origin = headers.origin;
  if (!isAllowedOrigin(origin, headers.host)) {
    return new AppError('forbidden_origin', `Origin ${JSON.stringify(origin)} is not this server's origin`, {
      hint: 'cross-site requests are refused; open the web UI from this server itself',
    });
  }
  return null;
}

export function unauthorized(): AppError {
  return new AppError('unauthorized', 'a valid token is required', {
    hint: 'send the RUNDIFF_TOKEN value as "Authorization: Bearer <token>" (socket.io: auth.token)',
  });
}
