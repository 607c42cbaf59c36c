import { createTransport, type Transporter } from 'nodemailer';
import type { Config } from '../config';
import type { Logger } from '../logging/logger';

/**
 * Sends e-mail through SMTP_URL with nodemailer, off the request path: a route hands over a job that
 * decides what (if anything) to send, and answers at once. So the answer takes the same time and says
 * the same whether or not a message goes out (no account enumeration), and a slow or failing mail
 * server never fails the request; failures are logged without the message's contents.
 */

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** False when SMTP_URL is unset: nothing can be sent. */
  readonly configured: boolean;
  /** Runs `job` after the current request and sends the message it returns (none: nothing to send). */
  dispatch(job: () => Promise<MailMessage | undefined>): void;
  /**
   * Sends one message now and resolves once the SMTP server took it (for a worker's activity, which is
   * retried when this throws); false when SMTP_URL is unset and nothing could be sent.
   */
  send(message: MailMessage): Promise<boolean>;
  /** Resolves once every dispatched job has finished (sent, or failed and logged). */
  drain(): Promise<void>;
}

export function createMailer({ config, logger }: { config: Config; logger: Logger }): Mailer {
  const from = config.MAIL_FROM ?? `StablePay <no-reply@${new URL(config.PUBLIC_BASE_URL).hostname}>`;
  const transport: Transporter | undefined = config.SMTP_URL
    ? createTransport(config.SMTP_URL, { from })
    : undefined;
  const running = new Set<Promise<void>>();

  return {
    configured: transport !== undefined,
    dispatch(job) {
      const run = (async () => {
        const message = await job();
        if (!message) return;
        if (!transport) {
          logger.warn('no SMTP_URL: an e-mail was not sent');
          return;
        }
        await transport.sendMail(message);
        logger.info({ mail: 'sent' }, 'e-mail sent');
      })().catch((error: unknown) => {
        // The error may quote the SMTP dialogue, never the message body; log its kind and text only.
        logger.error(
          { err: { name: (error as Error).name, message: (error as Error).message } },
          'e-mail not sent',
        );
      });
      running.add(run);
      void run.finally(() => running.delete(run));
    },
    async send(message) {
      if (!transport) {
        logger.warn('no SMTP_URL: an e-mail was not sent');
        return false;
      }
      await transport.sendMail(message);
      logger.info({ mail: 'sent' }, 'e-mail sent');
      return true;
    },
    async drain() {
      while (running.size > 0) await Promise.all([...running]);
      transport?.close();
    },
  };
}
