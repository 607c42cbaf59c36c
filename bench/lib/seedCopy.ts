import type { Client } from 'pg';

/**
 * `COPY <table> (<columns>) FROM STDIN` through node-postgres's own protocol support (the client hands a
 * CopyInResponse to the active query; the connection sends CopyData and CopyDone frames). pg-copy-streams
 * is not installed; this is the same mechanism in a few lines: one statement, one round trip, rows
 * streamed in text format with the socket's back-pressure respected.
 */
class CopyFromStdin {
  callback?: (error: Error | null, rowCount?: number) => void;
  private rowCount = 0;
  private failed = false;

  constructor(
    readonly text: string,
    private readonly chunks: Iterable<string>,
  ) {}

  submit(connection: CopyConnection): void {
    connection.query(this.text);
  }

  handleCopyInResponse(connection: CopyConnection): void {
    void this.send(connection);
  }

  private async send(connection: CopyConnection): Promise<void> {
    try {
      for (const chunk of this.chunks) {
        if (this.failed) return;
        connection.sendCopyFromChunk(Buffer.from(chunk, 'utf8'));
        if (connection.stream.writableNeedDrain) {
          await new Promise<void>((resolve) => connection.stream.once('drain', () => resolve()));
        }
      }
      connection.endCopyFrom();
    } catch (error) {
      connection.sendCopyFail(error instanceof Error ? error.message : String(error));
    }
  }

  handleCommandComplete(message: { text?: string }): void {
    this.rowCount = Number(/COPY (\d+)/.exec(message.text ?? '')?.[1] ?? 0);
  }

  handleReadyForQuery(): void {
    this.callback?.(null, this.rowCount);
  }

  handleError(error: Error): void {
    this.failed = true;
    this.callback?.(error);
  }

  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handleCopyData(): void {}
  handlePortalSuspended(): void {}
}

interface CopyConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
  sendCopyFail(message: string): void;
  stream: NodeJS.WritableStream & { writableNeedDrain: boolean };
}

/** One COPY text-format field: NULL as \N, backslash, tab and newline escaped. */
export function copyField(value: string | number | bigint | boolean | null | undefined): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  const text = String(value);
  return /[\\\t\n\r]/.test(text)
    ? text.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r')
    : text;
}

/**
 * Streams `count` rows, built by `row(index)`, into `table` with one COPY FROM STDIN; rows are grouped
 * into chunks of about 1 MB. Resolves with the row count the server reported (checked against `count`).
 */
export async function copyRows(
  client: Client,
  table: string,
  columns: readonly string[],
  count: number,
  row: (index: number) => readonly (string | number | bigint | boolean | null | undefined)[],
): Promise<number> {
  function* chunks(): Generator<string> {
    let buffer: string[] = [];
    let size = 0;
    for (let index = 0; index < count; index++) {
      const line = `${row(index).map(copyField).join('\t')}\n`;
      buffer.push(line);
      size += line.length;
      if (size >= 1 << 20) {
        yield buffer.join('');
        buffer = [];
        size = 0;
      }
    }
    if (buffer.length) yield buffer.join('');
  }
  const text = `COPY ${table} (${columns.join(', ')}) FROM STDIN`;
  const copied = await new Promise<number>((resolve, reject) => {
    const query = new CopyFromStdin(text, chunks());
    query.callback = (error, rowCount) => (error ? reject(error) : resolve(rowCount ?? 0));
    void client.query(query as never);
  });
  if (copied !== count) throw new Error(`COPY ${table} stored ${copied} rows, not ${count}`);
  return copied;
}
