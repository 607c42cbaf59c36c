import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';

/**
 * What the tool server remembers between runs, in one JSON file readable by its owner only (mode 0600,
 * in a 0700 folder when it creates one): the merchant session token, the `sk_` key create_api_key
 * returned, and the session keys with their permissions. Written atomically (a temporary file in the
 * same folder, renamed over the old one), so a crash never leaves half a file.
 */

const hex = z.string().regex(/^0x[0-9a-fA-F]*$/);

const sessionKeySchema = z.object({
  id: z.string(),
  status: z.enum(['awaiting_owner_signature', 'active']),
  chainId: z.number().int(),
  smartAccount: hex,
  /** The session key itself: generated here, never sent anywhere. */
  privateKey: hex,
  address: hex,
  /** The session key's own DeleGator account: the delegate and the only redeemer of the permission. */
  sessionAccount: z.object({ address: hex, factory: hex, factoryData: hex }),
  /** The delegation with bigints as decimal strings; `signature` is the owner's, once given. */
  delegation: z.object({
    delegate: hex,
    delegator: hex,
    authority: hex,
    caveats: z.array(z.object({ enforcer: hex, terms: hex, args: hex })),
    salt: z.string(),
    signature: hex,
  }),
  delegationManager: hex,
  permission: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
});

export type StoredSessionKey = z.infer<typeof sessionKeySchema>;

const credentialsSchema = z.object({
  session: z
    .object({
      token: z.string(),
      expiresAt: z.string(),
      merchantId: z.string(),
      email: z.string().nullable(),
    })
    .optional(),
  apiKey: z.object({ id: z.string(), rawKey: z.string() }).optional(),
  sessionKeys: z.array(sessionKeySchema).default([]),
});

export type Credentials = z.infer<typeof credentialsSchema>;

export class CredentialsFileError extends Error {
  override name = 'CredentialsFileError';
}

export interface CredentialsStore {
  readonly path: string;
  read(): Promise<Credentials>;
  /** Reads, applies `change`, writes back; returns what was written. */
  update(change: (credentials: Credentials) => Credentials): Promise<Credentials>;
}

export function createCredentialsStore(path: string): CredentialsStore {
  let queue: Promise<unknown> = Promise.resolve();

  async function read(): Promise<Credentials> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { sessionKeys: [] };
      throw new CredentialsFileError(`credentials file ${path} cannot be read: ${(error as Error).message}`);
    }
    // A file someone else made readable is narrowed back to its owner before anything is trusted from it.
    if (((await stat(path)).mode & 0o077) !== 0) await chmod(path, 0o600);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new CredentialsFileError(`credentials file ${path} is not JSON`);
    }
    const credentials = credentialsSchema.safeParse(parsed);
    if (!credentials.success) throw new CredentialsFileError(`credentials file ${path} has an unknown shape`);
    return credentials.data;
  }

  async function write(credentials: Credentials): Promise<void> {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    await rename(temporary, path);
  }

  return {
    path,
    read,
    update(change) {
      // Updates run one after another, so two tool calls never lose each other's change.
      const next = queue.then(async () => {
        const updated = change(await read());
        await write(updated);
        return updated;
      });
      queue = next.catch(() => undefined);
      return next;
    },
  };
}
