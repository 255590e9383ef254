export {
  checkHostAndOrigin,
  tokenMatches,
  bearerToken,
  unauthorized,
  isLoopbackHost,
  isAllowedHost,
  isAllowedOrigin,
  parseHostHeader,
  type SecurityPolicy,
} from './policy.ts';
