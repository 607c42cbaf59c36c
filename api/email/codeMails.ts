import type { MailMessage } from '../../mail/mailer';

/** The messages that carry one-time codes; the code is the only secret in them and appears once. */

export function loginCodeMail({ to, code }: { to: string; code: string }): MailMessage {
  return {
    to,
    subject: `${code} is your StablePay login code`,
    text: [
      `Your StablePay login code is ${code}.`,
      '',
      'It is valid for 10 minutes and works once. If you did not ask to sign in, ignore this e-mail:',
      'nobody can sign in without the code.',
    ].join('\n'),
  };
}

export function verificationCodeMail({ to, code }: { to: string; code: string }): MailMessage {
  return {
    to,
    subject: `${code} is your StablePay e-mail verification code`,
    text: [
      `Your StablePay e-mail verification code is ${code}.`,
      '',
      'Enter it to confirm this address for your merchant account; once confirmed you can sign in with it.',
      'The code is valid for 10 minutes and works once. If you did not add this address, ignore this e-mail.',
    ].join('\n'),
  };
}
