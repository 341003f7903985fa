// The page the console serves, built once when the server starts: src/console/web/main.tsx and
// what it imports (preact, the update assessment of src/views/upgrade-status) bundled by esbuild into
// one script and one style sheet, kept in memory. Built from the sources whether bosun runs from
// src/ (tsx) or from dist/ (the browser's code is not part of the Node build), so the page always
// matches the checkout. A build error stops the console from starting, with esbuild's message.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** src/console/web, from src/console or dist/console alike. */
export const WEB_SOURCES = fileURLToPath(new URL('../../src/console/web/', import.meta.url));

export interface ServedFile {
  body: Buffer;
  contentType: string;
  etag: string;
}

export interface ConsoleBundle {
  /** The file at a path (/index.html, /static/app.js, /static/app.css), or undefined. */
  file(path: string): ServedFile | undefined;
}

const served = (body: string | Uint8Array, contentType: string): ServedFile => {
  const buffer = Buffer.from(body);
  return { body: buffer, contentType, etag: `"${createHash('sha256').update(buffer).digest('hex').slice(0, 16)}"` };
};

const INDEX = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bosun console</title>
<link rel="stylesheet" href="/static/app.css">
<script type="module" src="/static/app.js"></script>
</head>
<body>
<div id="app"><main><p>Loading the console…</p></main></div>
<noscript>The bosun console needs JavaScript.</noscript>
</body>
</html>
`;

export async function buildConsoleBundle(): Promise<ConsoleBundle> {
  const { build, stop } = await import('esbuild');
  const result = await build({
    entryPoints: [`${WEB_SOURCES}main.tsx`],
    bundle: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  }).finally(() => stop()); // esbuild's service process is not needed once the bundle is built (some 20 MiB)
  const files = new Map<string, ServedFile>([
    ['/index.html', served(INDEX, 'text/html; charset=utf-8')],
    ['/static/app.js', served(result.outputFiles[0].contents, 'text/javascript; charset=utf-8')],
    ['/static/app.css', served(readFileSync(`${WEB_SOURCES}app.css`), 'text/css; charset=utf-8')],
  ]);
  return { file: (path) => files.get(path === '/' ? '/index.html' : path) };
}
