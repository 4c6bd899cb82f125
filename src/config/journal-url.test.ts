import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describeJetStream, journalUrlProblem, parseJournalUrl } from './journal-url.ts';
import { loadOptions } from './options.ts';

describe('--journal-url', () => {
  test('one server: the stream and subject default, the monitor is the host on 8222', () => {
    assert.deepEqual(parseJournalUrl('nats://10.0.0.5:4222'), {
      servers: ['nats://10.0.0.5:4222'],
      monitorUrls: ['http://10.0.0.5:8222'],
      stream: 'BOURSE_JOURNAL',
      subject: 'bourse.journal',
    });
  });

  test('several servers, a stream, a subject and the monitoring endpoints named', () => {
    const l = parseJournalUrl(
      'nats://a:4222,b:4222?stream=VENUE_1&subject=venue.one&monitor=http://a:8222,http://b:8222',
    );
    assert.deepEqual(l.servers, ['nats://a:4222', 'nats://b:4222']);
    assert.deepEqual(l.monitorUrls, ['http://a:8222', 'http://b:8222']);
    assert.equal(l.stream, 'VENUE_1');
    assert.equal(l.subject, 'venue.one');
  });

  test('a password is not shown', () => {
    assert.equal(
      describeJetStream(parseJournalUrl('nats://u:secret@h:4222')),
      'JetStream stream BOURSE_JOURNAL on nats://u:***@h:4222',
    );
  });

  test('bad URLs are refused with the reason, and by the options with the flag named', () => {
    assert.match(String(journalUrlProblem('http://h:4222')), /expected nats:\/\/host:port/);
    assert.match(String(journalUrlProblem('nats://h:4222?streem=X')), /unknown parameter 'streem'/);
    assert.match(String(journalUrlProblem('nats://h:4222?stream=a.b')), /stream: letters/);
    assert.match(String(journalUrlProblem('nats://h:4222?monitor=h:8222')), /monitor: expected http/);
    assert.equal(journalUrlProblem('nats://h:4222'), undefined);
    assert.throws(() => loadOptions(['--journal-url', 'nats:/x'], {}), /--journal-url: expected nats/);
    assert.throws(
      () => loadOptions([], { BOURSE_LIMITS_URL: 'http://r:6379' }),
      /--limits-url: expected redis/,
    );
    const ok = loadOptions(['--limits-url', 'redis://r:6379/2', '--journal-url', 'nats://n:4222'], {});
    assert.equal(ok.limitsUrl, 'redis://r:6379/2');
    assert.equal(ok.journalUrl, 'nats://n:4222');
  });
});
