import { expect } from 'chai';
import { redactUrl } from '@hortus/core';

describe('redactUrl: the one form of a URL that logs, errors and reports show', () => {
  it('when a URL carries credentials, then they show as ***@ and nothing of them remains', () => {
    expect(redactUrl('mqtt://user:s3cret@127.0.0.1:1883')).to.equal('mqtt://***@127.0.0.1:1883');
    expect(redactUrl('smtp://mailer:p%40ss@mail.example.org:587')).to.equal(
      'smtp://***@mail.example.org:587',
    );
    expect(redactUrl('redis://:only-a-password@cache:6379')).to.equal('redis://***@cache:6379');
    expect(redactUrl('mqtt://user:a@b@broker')).to.equal('mqtt://***@broker');
  });

  it('when a URL has a query or fragment, then both are dropped, since options and tokens live there', () => {
    expect(redactUrl('wss://broker.example.org/mqtt?password=x#y', 'path')).to.equal(
      'wss://broker.example.org/mqtt',
    );
    expect(redactUrl('https://hooks.example.org?token=abc')).to.equal('https://hooks.example.org');
  });

  it('when the path is not asked for, then only scheme and hosts show (a hook keeps its token in the path)', () => {
    expect(redactUrl('https://hooks.slack.com/services/T0/B1/XYZ')).to.equal('https://hooks.slack.com');
  });

  it('when a MongoDB URI names several hosts and a database, then all hosts and, with path, the database show', () => {
    expect(
      redactUrl(
        'mongodb://admin:pw@db-1:27017,db-2:27017/greenhouse?replicaSet=rs0&authSource=admin',
        'path',
      ),
    ).to.equal('mongodb://***@db-1:27017,db-2:27017/greenhouse');
    expect(redactUrl('mongodb+srv://cluster0.example.net/hortus', 'path')).to.equal(
      'mongodb+srv://cluster0.example.net/hortus',
    );
  });

  it('when the text is no URL (no scheme://, no host, spaces), then it says so and never echoes it', () => {
    for (const text of ['not a url', 'javascript:alert(1)', 'https://', 'https://user:pw@', 'http://a b']) {
      expect(redactUrl(text), text).to.equal('an unparsable URL');
    }
  });
});
