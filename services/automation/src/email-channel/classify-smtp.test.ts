import { classifySmtpFailure } from './channel';

// The settings test answers with a sentence of ours per kind of failure, never the server's text (a banner, a reply).
describe('classifySmtpFailure', () => {
  const err = (message: string, extra: object = {}) => Object.assign(new Error(message), extra);

  it.each([
    [
      err('Invalid login: 535 5.7.8 secret-revealing banner', { code: 'EAUTH', responseCode: 535 }),
      'The mail server refused the sign-in (535): check the user name and password',
    ],
    [err('connect ECONNREFUSED 203.0.113.9:587', { code: 'ESOCKET' }), 'The mail server could not be reached: check the host and port'],
    [err('Greeting never received', { code: 'ETIMEDOUT' }), 'The mail server did not answer in time'],
    [
      err('self-signed certificate in certificate chain', { code: 'ESOCKET' }),
      'No secure connection to the mail server could be made: check the port and the secure setting',
    ],
    [
      err('550 5.7.1 Relaying denied by mx.internal.corp', { code: 'EENVELOPE', responseCode: 550 }),
      "The mail server refused the message (550): check the sender address and the server's rules",
    ],
    [
      err('421 try later, server mx.internal.corp', { code: 'EENVELOPE', responseCode: 421 }),
      'The mail server cannot take the message now (421): try again later',
    ],
    [err('SSH-2.0-OpenSSH_9.2 banner of another service'), 'The mail server did not accept the message'],
  ])('%s → a fixed sentence', (failure, sentence) => {
    expect(classifySmtpFailure(failure)).toBe(sentence);
    expect(sentence).not.toContain((failure as Error).message);
  });
});
