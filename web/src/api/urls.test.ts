import { describe, expect, it } from 'vitest';
import { patchFileName, urls } from './urls.ts';

describe('REST urls', () => {
  it('percent-encodes ids, including the colon of a change_id', () => {
    expect(urls.file('s 1/x', 'run:r#1', 'f?1')).toBe(
      '/api/hermes/sessions/s%201%2Fx/workspace-run-changes/run%3Ar%231/files/f%3F1',
    );
    expect(urls.patch('s', 'tool:t1')).toBe('/api/hermes/sessions/s/workspace-run-changes/tool%3At1/patch');
    expect(urls.change('s', 'run:r1')).toBe('/api/hermes/sessions/s/workspace-run-changes/run%3Ar1');
  });

  it('builds list and paging queries', () => {
    expect(urls.sessions()).toBe('/api/hermes/sessions');
    expect(urls.sessions({ limit: 50, before: 123 })).toBe('/api/hermes/sessions?limit=50&before=123');
    expect(urls.sessions({ limit: 50, filter: { q: 'a b&c', status: 'failed', from: 1, to: 2 } })).toBe(
      '/api/hermes/sessions?limit=50&q=a+b%26c&status=failed&from=1&to=2',
    );
    expect(urls.session('a', { messagesBefore: 9, messagesLimit: 500 })).toBe(
      '/api/hermes/sessions/a?messages_before=9&messages_limit=500',
    );
    expect(urls.files('s', 'tool:t1', { after: -1, limit: 200 })).toBe(
      '/api/hermes/sessions/s/workspace-run-changes/tool%3At1/files?limit=200',
    );
    expect(urls.files('s', 'run:r1', { after: 49, limit: 150 })).toBe(
      '/api/hermes/sessions/s/workspace-run-changes/run%3Ar1/files?limit=150&after=49',
    );
  });

  it('builds the review routes of section 3c with encoded ids', () => {
    expect(urls.review('s 1')).toBe('/api/hermes/sessions/s%201/review');
    expect(urls.comments('s')).toBe('/api/hermes/sessions/s/comments');
    expect(urls.comment('s', 'c/1')).toBe('/api/hermes/sessions/s/comments/c%2F1');
    expect(urls.commentAddressed('s', 'c1')).toBe('/api/hermes/sessions/s/comments/c1/addressed');
    expect(urls.reviews('s')).toBe('/api/hermes/sessions/s/reviews');
  });

  it('makes a safe download name', () => {
    expect(patchFileName('../etc', 'run:r1')).toBe('etc-run_r1.patch');
  });
});
