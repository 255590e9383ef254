import type { RunStatus, SearchKind } from '../../shared/index.ts';
import { likePattern } from './sql/dialect.ts';
import type { Param, Sql } from './sql/types.ts';
import type { SearchApi } from './types.ts';

/**
 * Search over the documents migrations 0011 and 0013's triggers keep (one per session or run title,
 * message, tool call summary, file path and patch), written in the transaction that stores their
 * rows. Matching is case-insensitive substrings: the text index (`dialect.textSearch`) takes the
 * terms of 3+ characters, shorter ones are checked on the rows it finds.
 */

/** What a search asks for; every criterion given must hold. */
export interface SearchCriteria {
  /** Texts the document must hold, each a case-insensitive substring; at least one of 3+ characters. */
  terms: readonly string[];
  /** The hit is a changed file whose path holds this (path and patch documents only). */
  path: string | null;
  /** The session's id starts with `<agent>:` (the hooks' sessions: `claude-code:...`). */
  agent: string | null;
  /** The run the hit belongs to has this status. */
  status: RunStatus | null;
  /** Only this session's documents (read through its own index, not the text index). */
  sessionId: string | null;
  /** Only these kinds (null: all). */
  kinds: readonly SearchKind[] | null;
  /** Rows answered (one more is read to tell whether more exist). */
  limit: number;
  /**
   * Documents the text index hands over at most, newest first: the bound on a search's work. They
   * are read newest first and the search stops once `limit` and one more have passed the filters.
   */
  maxCandidates: number;
  /** Time bound where the engine can stop a statement (PostgreSQL). */
  timeoutMs: number;
  /** Characters of each document's text answered. */
  bodyChars: number;
}

/** One document found, with the rows it belongs to. */
export interface SearchRow {
  id: number;
  kind: SearchKind;
  session_id: string;
  session_title: string | null;
  /** A message's or tool call's id, a file row's id, a run's id for its title; '' for a session's title. */
  ref: string;
  body: string;
  run_id: string | null;
  run_status: RunStatus | null;
  tool_call_id: string | null;
  change_id: string | null;
  path: string | null;
  at: number;
}

export interface SearchFound {
  rows: SearchRow[];
  more: boolean;
  /**
   * The page is not full and the search looked at `maxCandidates` documents, its bound (older ones,
   * if any, were not looked at). A full page is never capped: it needed no older document.
   */
  capped: boolean;
  /** The engine stopped the search at its time bound; `rows` is empty. */
  timed_out: boolean;
}

/**
 * Each document's rows, joined by its kind (a ref names a message, a tool call or a file row). The
 * run, its status and a file's path are the document's own columns (migration 0013 keeps them), so
 * the filters read no join.
 */
const JOINS = `
  JOIN sessions s ON s.id = d.session_id
  LEFT JOIN messages msg ON d.kind IN ('prompt', 'reply', 'tool') AND msg.session_id = d.session_id AND msg.id = d.ref
  LEFT JOIN tool_calls tc ON d.kind = 'command' AND tc.session_id = d.session_id AND tc.tool_call_id = d.ref
  LEFT JOIN workspace_run_change_files f ON d.kind IN ('path', 'patch') AND f.id = d.ref
  LEFT JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
  LEFT JOIN runs r ON d.kind = 'title' AND d.ref <> '' AND r.session_id = d.session_id AND r.run_id = d.ref`;

const COLUMNS = `d.id, d.kind, d.session_id, s.title AS session_title, d.ref, substr(d.body, 1, ?) AS body,
  d.run_id, d.run_status, COALESCE(msg.tool_call_id, tc.tool_call_id, c.tool_call_id) AS tool_call_id, f.change_id,
  d.path, COALESCE(msg.created_at, tc.started_at, f.created_at, r.started_at, s.created_at) AS at`;

type Raw = Omit<SearchRow, 'at' | 'id'> & { at: number | string; id: number | string };

export function createSearchStore(sql: Sql): SearchApi {
  const d = sql.dialect;
  return {
    setPatchChars: (chars) =>
      sql.atomic(async (q) => {
        await q.run('UPDATE search_settings SET patch_chars = ? WHERE id = 1 AND patch_chars <> ?', [chars, chars]);
      }),

    async search(c) {
      const long = c.terms.filter((t) => [...t].length >= 3);
      const short = c.terms.filter((t) => [...t].length < 3);
      const where: string[] = [];
      const params: Param[] = [];
      let from: string;
      const fromParams: Param[] = [];
      if (c.sessionId !== null) {
        // One session: its own documents through its index, newest first, bounded the same way.
        from = `(SELECT id FROM search_docs WHERE session_id = ? ORDER BY id DESC LIMIT ?) m`;
        fromParams.push(c.sessionId, c.maxCandidates);
        for (const t of long) {
          where.push(d.likeFolded('d.body'));
          params.push(d.likeValue(likePattern(t)));
        }
      } else {
        if (long.length === 0) throw new Error('a search needs a term of 3 characters or more');
        // Paths alone (a `path:` query, `kind:path`): the path documents' own index.
        const pathsOnly = c.kinds !== null && c.kinds.length > 0 && c.kinds.every((k) => k === 'path');
        from = `(${pathsOnly ? d.pathSearch(long.length) : d.textSearch(long.length)}) m`;
        fromParams.push(...d.textSearchValues(long, c.maxCandidates));
      }
      for (const t of short) {
        where.push(d.likeFolded('d.body'));
        params.push(d.likeValue(likePattern(t)));
      }
      if (c.path !== null) {
        where.push(d.likeFolded('d.path'));
        params.push(d.likeValue(likePattern(c.path)));
      }
      if (c.agent !== null) {
        const prefix = `${c.agent}:`;
        where.push('substr(d.session_id, 1, ?) = ?');
        params.push([...prefix].length, prefix);
      }
      if (c.status !== null) {
        where.push('d.run_status = ?');
        params.push(c.status);
      }
      if (c.kinds !== null) {
        where.push(`d.kind IN (${c.kinds.map(() => '?').join(', ')})`);
        params.push(...c.kinds);
      }
      // Two steps: the ids that pass (no join: the filters are the document's own columns, no
      // text copied), newest first; then the rows of the page alone. The candidates stream newest
      // first (the text index in id order, a session's documents through its `(session_id, id)`
      // index) and the outer order is theirs, so the engine stops once the page and one more have
      // passed instead of reading every candidate up to the bound.
      const ids = `SELECT d.id FROM ${from} ${d.joinInOrder} search_docs d ON d.id = m.id
        ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY m.id DESC LIMIT ?`;
      // The candidates' parameters come first in the text, then the filters'.
      const idParams: Param[] = [...fromParams, ...params, c.limit + 1];
      try {
        const found = await sql.read(async (q) => {
          const bound = d.statementTimeout(c.timeoutMs);
          if (bound !== null) await q.run(bound);
          const hits = await q.all<{ id: number | string }>(ids, idParams);
          // A full page needed no older candidate; a short one looked at all of them, up to the bound.
          let capped = false;
          if (hits.length <= c.limit) {
            const n = await q.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${from}`, fromParams);
            capped = Number(n?.n ?? 0) >= c.maxCandidates;
          }
          const page = hits.slice(0, c.limit).map((h) => Number(h.id));
          const rows =
            page.length === 0
              ? []
              : await q.all<Raw>(
                  `SELECT ${COLUMNS} FROM search_docs d ${JOINS}
                   WHERE d.id IN (${page.map(() => '?').join(', ')}) ORDER BY d.id DESC`,
                  [c.bodyChars, ...page],
                );
          return { rows, more: hits.length > c.limit, capped };
        });
        return {
          rows: found.rows.map((r) => ({ ...r, id: Number(r.id), at: Number(r.at) })),
          more: found.more,
          capped: found.capped,
          timed_out: false,
        };
      } catch (err) {
        if (!d.timedOut(err)) throw err;
        return { rows: [], more: false, capped: false, timed_out: true };
      }
    },
  };
}
