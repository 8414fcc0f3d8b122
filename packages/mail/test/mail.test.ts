import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { ConfigError } from '@hortus/core';
import { CapturingLogger, startSmtpTestServer } from '@hortus/test-support';
import { LogMailer, mailSettingsFromEnv, SmtpMailer } from '@hortus/mail';

chai.use(chaiAsPromised);
const { expect } = chai;

describe('SmtpMailer against a real SMTP server', () => {
  it('when a message is sent, then the server receives it for the recipient, with the subject and the link', async () => {
    const smtp = await startSmtpTestServer();
    const logger = new CapturingLogger();
    const mailer = new SmtpMailer({ smtpUrl: smtp.url, from: 'Hortus <hortus@example.org>' }, logger);
    try {
      const link = `http://localhost:3000/reset_password/0123456789abcdef01234567/${'ab'.repeat(32)}`;
      await mailer.send({
        to: 'ana@example.org',
        subject: 'Reset your Hortus password',
        text: `Open:\n\n${link}\n`,
      });

      expect(smtp.delivered).to.have.lengthOf(1);
      const [message] = smtp.delivered;
      expect(message?.to).to.deep.equal(['ana@example.org']);
      expect(message?.from).to.equal('hortus@example.org');
      expect(message?.data).to.match(/^Subject: Reset your Hortus password\r$/mu);
      expect(message?.body).to.include(link);
      expect(logger.lines.map((line) => line.event)).to.deep.equal(['mail sent']);
    } finally {
      mailer.close();
      await smtp.close();
    }
  });

  it('when the server cannot be reached, then send rejects and the failure is logged without the text', async () => {
    const smtp = await startSmtpTestServer();
    await smtp.close();
    const logger = new CapturingLogger();
    const mailer = new SmtpMailer({ smtpUrl: smtp.url, from: 'hortus@example.org' }, logger);

    await expect(mailer.send({ to: 'ana@example.org', subject: 'Hello', text: 'secret-link' })).to.be
      .rejected;
    expect(logger.lines).to.have.lengthOf(1);
    expect(logger.lines[0]).to.include({ level: 'error', event: 'mail failed', to: 'ana@example.org' });
    expect(JSON.stringify(logger.lines)).to.not.include('secret-link');
  });
});

describe('LogMailer', () => {
  it('when a message is sent without SMTP, then it is written to the log as a warning with its text', async () => {
    const logger = new CapturingLogger();

    await new LogMailer(logger).send({
      to: 'ana@example.org',
      subject: 'Reset',
      text: 'http://x/reset_password/1/2',
    });

    expect(logger.lines).to.have.lengthOf(1);
    expect(logger.lines[0]).to.include({
      level: 'warn',
      to: 'ana@example.org',
      subject: 'Reset',
      text: 'http://x/reset_password/1/2',
    });
  });
});

describe('mailSettingsFromEnv', () => {
  it('when nothing is set, then mail goes to the log from a default sender', () => {
    expect(mailSettingsFromEnv({})).to.deep.equal({ from: 'Hortus <hortus@localhost>' });
  });

  it('when SMTP_URL and MAIL_FROM are set, then they are taken', () => {
    expect(
      mailSettingsFromEnv({
        SMTP_URL: 'smtps://user:pw@mail.example.org:465',
        MAIL_FROM: 'Garden <garden@example.org>',
      }),
    ).to.deep.equal({ smtpUrl: 'smtps://user:pw@mail.example.org:465', from: 'Garden <garden@example.org>' });
  });

  it('when SMTP_URL is not an SMTP URL, then the problem is reported without its password', () => {
    expect(() => mailSettingsFromEnv({ SMTP_URL: 'http://user:hunter2@mail.example.org' }))
      .to.throw(ConfigError)
      .that.satisfies((error: ConfigError) => !error.message.includes('hunter2'));
  });
});
