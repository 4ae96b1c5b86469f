// Hooks the long lists and live pages share: a virtual window over a list
// of any length (only the visible rows are in the DOM), a paged list that
// loads the next page as its end scrolls into view, and a live event
// subscription that coalesces bursts into one refresh.
import { useState, useEffect, useRef, useCallback, useLayoutEffect } from 'preact/hooks';
import { api, html } from './kit.js';

// useVirtual windows count rows of about rowHeight pixels inside a
// scrolling container (ref, onScroll, onKeyDown go on it). It renders
// rows start..end and two spacers (padTop, padBottom) standing in for the
// rest. The real row height is measured from a rendered row (an element
// with data-vi), so the spacers stay exact whatever the CSS says.
// Keyboard: ArrowUp/Down (and k/j), PageUp/Down, Home/End move the focus
// between rows (elements with data-vi and tabindex), scrolling rows into
// existence first; onEnd is called when the last rows come into view.
export function useVirtual(count, rowHeight = 30, { overscan = 12, onEnd } = {}) {
  const ref = useRef(null);
  const [top, setTop] = useState(0);
  const [height, setHeight] = useState(600);
  const [rowH, setRowH] = useState(rowHeight);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => setHeight(el.clientHeight || 600));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  useLayoutEffect(() => {
    const r = ref.current && ref.current.querySelector('[data-vi]');
    if (r) { const h = r.getBoundingClientRect().height; if (h > 4 && Math.abs(h - rowH) > 0.5) setRowH(h); }
  });
  const start = Math.max(0, Math.min(count, Math.floor(top / rowH) - overscan));
  const end = Math.min(count, Math.ceil((top + height) / rowH) + overscan);
  useEffect(() => { if (onEnd && count > 0 && end >= count - 2) onEnd(); }, [end, count]);
  const onScroll = useCallback(e => setTop(e.currentTarget.scrollTop), []);
  const focusRow = useCallback(i => {
    const el = ref.current;
    if (!el || count === 0) return;
    i = Math.max(0, Math.min(count - 1, i));
    const y = i * rowH;
    if (y < el.scrollTop || y + 2 * rowH > el.scrollTop + el.clientHeight) {
      el.scrollTop = Math.max(0, y - el.clientHeight / 2);
      setTop(el.scrollTop);
    }
    // The row exists after the next render.
    requestAnimationFrame(() => requestAnimationFrame(() => {
      const row = el.querySelector(`[data-vi="${i}"]`);
      if (row) { row.focus(); row.scrollIntoView({ block: 'nearest' }); }
    }));
  }, [count, rowH]);
  const onKeyDown = useCallback(e => {
    const cur = e.target.closest && e.target.closest('[data-vi]');
    if (!cur || (e.target !== cur && e.target.closest('input, textarea, select'))) return;
    const i = +cur.dataset.vi, page = Math.max(1, Math.floor((ref.current ? ref.current.clientHeight : 600) / rowH) - 1);
    const to = { ArrowDown: i + 1, j: i + 1, ArrowUp: i - 1, k: i - 1, PageDown: i + page, PageUp: i - page, Home: 0, End: count - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    e.stopPropagation();
    focusRow(to);
  }, [count, rowH, focusRow]);
  return { ref, onScroll, onKeyDown, start, end, padTop: start * rowH, padBottom: Math.max(0, (count - end) * rowH), focusRow };
}

// usePaged loads a list page by page: base is the endpoint (null: none),
// listKey the answer's array, and the next page comes with
// ?pageToken=<nextPageToken>. A change of base or deps starts over.
// extraKey names a second array every page may carry (a listing's
// prefixes), gathered in extra.
export function usePaged(base, listKey, deps = [], extraKey = '') {
  const [st, set] = useState({ items: [], extra: [], next: '', loading: !!base, error: null, done: !base });
  const gen = useRef(0);
  const load = useCallback((token, replace) => {
    const g = gen.current;
    set(s => ({ ...s, loading: true }));
    api(base + (base.includes('?') ? '&' : '?') + (token ? 'pageToken=' + encodeURIComponent(token) : '')).then(
      d => { if (g === gen.current) set(s => ({ items: (replace ? [] : s.items).concat(d[listKey] || []), extra: (replace ? [] : s.extra).concat((extraKey && d[extraKey]) || []),
        next: d.nextPageToken || '', loading: false, error: null, done: !d.nextPageToken })); },
      error => { if (g === gen.current) set(s => ({ ...s, loading: false, error, done: true })); });
  }, [base]);
  useEffect(() => {
    gen.current++;
    if (!base) { set({ items: [], extra: [], next: '', loading: false, error: null, done: true }); return; }
    load('', true);
  }, [base, ...deps]);
  const more = useCallback(() => { if (!st.loading && !st.done && st.next) load(st.next, false); }, [st, load]);
  return [st, more];
}

// useLive calls onEvent (at most every 150 ms, with the events since the
// last call) for each event of the stream matching query (e.g.
// "service=database&kind=commit"); it reports whether the stream is open.
export function useLive(query, onEvent) {
  const [live, setLive] = useState(false);
  const cb = useRef(onEvent);
  cb.current = onEvent;
  useEffect(() => {
    if (!query) return;
    const es = new EventSource('/api/events/stream?' + query);
    let batch = [], timer = null;
    es.onopen = () => setLive(true);
    es.onerror = () => setLive(false);
    es.onmessage = m => {
      let e;
      try { e = JSON.parse(m.data); } catch { return; }
      batch.push(e);
      if (!timer) timer = setTimeout(() => { const b = batch; batch = []; timer = null; cb.current(b); }, 150);
    };
    return () => { es.close(); if (timer) clearTimeout(timer); setLive(false); };
  }, [query]);
  return live;
}

// fmtBytes is a size for people.
export function fmtBytes(n) {
  if (n < 1024) return n + ' B';
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let i = -1;
  do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
  return n.toFixed(n < 10 ? 1 : 0) + ' ' + u[i];
}

// LiveDot shows whether a page's event stream is connected.
export const LiveDot = ({ live }) => html`<span class=${live ? 'ok live' : 'muted live'} data-live=${live}>${live ? '● live' : '○ connecting'}</span>`;
