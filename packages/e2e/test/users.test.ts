import { expect, startTestServer, type TestServer } from './harness.js';

describe('HTTP POST /api/changeEmail/:userId', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  it('when the user exists and the e-mail is valid, then 200 {message} and no password or hash is shown', async () => {
    const userId = await api.seed.user(`${api.unique('ada')}@example.org`);
    const reply = await api.call('POST', `/api/changeEmail/${userId}`, {
      json: { newEmail: 'new@example.org' },
    });
    expect(reply.status).to.equal(200);
    expect(reply.json()).to.deep.equal({ message: 'Email changed successfully' });
    expect(reply.text).to.not.match(/password|hash/iu);
  });

  it('when the user is unknown or the id malformed, then 404 plain text "User not found."', async () => {
    for (const userId of ['000000000000000000000000', 'not-an-id']) {
      const reply = await api.call('POST', `/api/changeEmail/${userId}`, {
        json: { newEmail: 'x@example.org' },
      });
      expect(reply.status).to.equal(404);
      expect(reply.headers.get('content-type')).to.match(/^text\/plain/u);
      expect(reply.text).to.equal('User not found.');
    }
  });

  it('when newEmail is missing or not an e-mail, then 400 plain text', async () => {
    const userId = await api.seed.user(`${api.unique('ada')}@example.org`);
    const missing = await api.call('POST', `/api/changeEmail/${userId}`, { json: {} });
    expect(missing.status).to.equal(400);
    expect(missing.headers.get('content-type')).to.match(/^text\/plain/u);
    expect(missing.text).to.equal('newEmail is required');
    const invalid = await api.call('POST', `/api/changeEmail/${userId}`, {
      json: { newEmail: 'not-an-email' },
    });
    expect(invalid.status).to.equal(400);
    expect(invalid.text).to.equal('newEmail must be a valid e-mail address');
  });

  it('when the body is malformed JSON, then 400 plain text', async () => {
    const reply = await api.call('POST', '/api/changeEmail/abc', {
      body: '{"newEmail":',
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).to.equal(400);
    expect(reply.headers.get('content-type')).to.match(/^text\/plain/u);
    expect(reply.text).to.equal('Request body is not valid JSON');
  });

  it('when another user has that e-mail, then 409 plain text', async () => {
    const taken = `${api.unique('taken')}@example.org`;
    await api.seed.user(taken);
    const userId = await api.seed.user(`${api.unique('ada')}@example.org`);
    const reply = await api.call('POST', `/api/changeEmail/${userId}`, { json: { newEmail: taken } });
    expect(reply.status).to.equal(409);
    expect(reply.headers.get('content-type')).to.match(/^text\/plain/u);
  });
});
