import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { TEST_STACK_FILE_VARIABLE } from '../harness/stack';

/**
 * The real tool server (`tool-server/main.ts`) in a child process, driven over stdio by the MCP SDK's
 * own client, as an MCP client application runs it. Its stderr (the logs) is kept for assertions;
 * anything on stdout that is not an MCP message is recorded as a protocol error.
 */

const root = resolve(__dirname, '..', '..');

export interface ToolServerUnderTest {
  client: Client;
  credentialsFile: string;
  /** Every line the server wrote to stderr. */
  stderrLines: string[];
  /** Transport errors, e.g. a stdout line that is not JSON-RPC. */
  protocolErrors: Error[];
  /** Every tool result text seen by `call`, for secret checks. */
  transcript: string[];
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

export interface StartToolServerParameters {
  apiUrl: string;
  /** Defaults to a fresh file in a fresh temporary folder. */
  credentialsFile?: string;
  env?: Record<string, string>;
  /** How to start it; defaults to `node --import tsx tool-server/main.ts`. */
  command?: { command: string; args: string[] };
  /**
   * The person's answer to an elicitation (MCP `elicitation/create`): when given, the client declares
   * the elicitation capability and answers each request with it.
   */
  elicit?: (request: ElicitRequest['params']) => ElicitResult | Promise<ElicitResult>;
}

export async function startToolServer({
  apiUrl,
  credentialsFile,
  env = {},
  command = { command: process.execPath, args: ['--import', 'tsx', 'tool-server/main.ts'] },
  elicit,
}: StartToolServerParameters): Promise<ToolServerUnderTest> {
  const credentials =
    credentialsFile ?? join(await mkdtemp(join(tmpdir(), 'stablepay-mcp-')), 'config', 'credentials.json');
  const transport = new StdioClientTransport({
    ...command,
    cwd: root,
    env: {
      ...getDefaultEnvironment(),
      STABLEPAY_API_URL: apiUrl,
      STABLEPAY_CREDENTIALS_FILE: credentials,
      STABLEPAY_LOG_LEVEL: 'trace',
      // The run's stack file is a deployments file: the local chains' RPC URLs and contracts.
      STABLEPAY_DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
      ...env,
    },
    stderr: 'pipe',
  });
  const stderrLines: string[] = [];
  let partial = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    stderrLines.push(...lines.filter(Boolean));
  });
  const protocolErrors: Error[] = [];
  const client = new Client(
    { name: 'stablepay-tests', version: '1.0.0' },
    elicit ? { capabilities: { elicitation: {} } } : {},
  );
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request.params));
  client.onerror = (error) => protocolErrors.push(error);
  await client.connect(transport);
  const transcript: string[] = [];
  return {
    client,
    credentialsFile: credentials,
    stderrLines,
    protocolErrors,
    transcript,
    async call(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      transcript.push(JSON.stringify(result));
      return result;
    },
    async close() {
      await client.close();
      if (partial) stderrLines.push(partial);
    },
  };
}

/** The text of a tool result. */
export function resultText(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/**
 * The JSON body of a successful tool result (its last text part: a notice about untrusted data may come
 * first); fails with the tool's text otherwise.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function resultBody<T = any>(result: CallToolResult): T {
  if (result.isError) throw new Error(`tool failed: ${resultText(result)}`);
  const texts = result.content.flatMap((part) => (part.type === 'text' ? [part.text] : []));
  return JSON.parse(texts[texts.length - 1]!) as T;
}
