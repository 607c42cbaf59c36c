import { createServer } from 'node:http';

/** Baseline: the same /health answer from a bare node:http server, nothing else. */
const body = JSON.stringify({ status: 'ok', revision: 'baseline' });
const server = createServer((request, response) => {
  if (request.url === '/health') {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    response.end(body);
  } else {
    response.writeHead(404).end();
  }
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
