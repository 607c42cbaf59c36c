import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import pino from 'pino';
import { createLogger } from '../logging/logger';
import { createToolServer } from './server';
import { ToolServerConfigError, loadToolServerConfig } from './toolServerConfig';

/**
 * `npm run mcp`: the StablePay tool server over stdio (an MCP client starts this command). stdout
 * carries MCP messages and nothing else: logs go to stderr, and so does anything a dependency prints
 * with console.log.
 */
for (const method of ['log', 'info', 'debug'] as const) console[method] = console.error;

async function main(): Promise<void> {
  const config = loadToolServerConfig(process.env);
  const logger = createLogger(
    { level: config.logLevel, name: 'tool-server' },
    pino.destination({ fd: 2, sync: true }),
  );
  const server = createToolServer({ config, logger });
  const transport = new StdioServerTransport();
  // The client closing our stdin (or the transport) ends the server.
  transport.onclose = () => process.exit(0);
  process.stdin.once('end', () => process.exit(0));
  await server.connect(transport);
  logger.info(
    { apiUrl: config.apiUrl, credentialsFile: config.credentialsFile },
    'tool server ready on stdio',
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ToolServerConfigError ? error.message : `tool server failed: ${(error as Error).stack ?? String(error)}`}\n`,
  );
  process.exit(1);
});
