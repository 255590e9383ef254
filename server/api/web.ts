import fs from 'node:fs';
import path from 'node:path';
import { inPackage } from '../package-root.ts';
import express, { Router } from 'express';

/** The built web UI (`npm run build` writes it here). */
export const DEFAULT_WEB_DIR = `${inPackage('dist', 'web')}/`;

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rundiff</title></head>
<body><h1>rundiff</h1>
<p>The web UI is not built yet. Run <code>npm run build</code> (or start the server with <code>npm start</code>, which builds it first), then reload.</p>
<p>The API is available under <code>/api</code>, for example <code>/api/health</code>.</p>
</body></html>
`;

/**
 * Serves the single-page app: its files, and `index.html` for every other GET outside `/api`
 * (client-side routes). Built assets under `/assets/` that do not exist stay 404, so a stale page
 * never receives HTML for a script. Checked per request: building while the server runs works.
 */
export function webRouter(webDir: string = DEFAULT_WEB_DIR): Router {
  const router = Router();
  const index = path.join(webDir, 'index.html');
  router.use(express.static(webDir, { index: false, fallthrough: true, dotfiles: 'ignore' }));
  router.get('/{*splat}', (req, res, next) => {
    if (req.path.startsWith('/api/') || req.path === '/api' || req.path.startsWith('/assets/')) return next();
    if (!fs.existsSync(index)) {
      res.status(200).type('html').send(NOT_BUILT);
      return;
    }
    res.sendFile(index, { headers: { 'Cache-Control': 'no-cache' } });
  });
  return router;
}
