package messaging

import (
	"sync"
)

// watchBuffer is how many deliveries a watcher may fall behind before it
// misses some (counted in Dropped) rather than slowing senders.
const watchBuffer = 64

// Watcher receives the deliveries to one token as they are accepted: the
// receive plane a browser shim or Studio listens on.
type Watcher struct {
	// C yields each delivery; it is closed by Close.
	C <-chan *Delivery

	c       chan *Delivery
	eng     *Engine
	key     string
	mu      sync.Mutex
	closed  bool
	dropped int
}

// Dropped is how many deliveries the watcher missed because it fell
// behind.
func (w *Watcher) Dropped() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped
}

// Close stops the watcher and closes C.
func (w *Watcher) Close() {
	w.eng.watchMu.Lock()
	set := w.eng.watchers[w.key]
	delete(set, w)
	if len(set) == 0 {
		delete(w.eng.watchers, w.key)
	}
	w.eng.watchMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.c)
	}
}

func (w *Watcher) offer(d *Delivery) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	select {
	case w.c <- d:
	default:
		w.dropped++
	}
}

// Watch starts receiving a live token's deliveries.
func (e *Engine) Watch(project, token string) (*Watcher, error) {
	t, err := e.Token(project, token)
	if err != nil {
		return nil, err
	}
	if t.Deleted {
		return nil, errUnregistered()
	}
	c := make(chan *Delivery, watchBuffer)
	w := &Watcher{C: c, c: c, eng: e, key: project + "\x00" + token}
	e.watchMu.Lock()
	if e.watchers == nil {
		e.watchers = map[string]map[*Watcher]bool{}
	}
	if e.watchers[w.key] == nil {
		e.watchers[w.key] = map[*Watcher]bool{}
	}
	e.watchers[w.key][w] = true
	e.watchMu.Unlock()
	return w, nil
}

// notify hands a committed message to the watchers of its tokens. It runs
// after the engine's lock is released, so no watcher sees an
// unacknowledged message and none can slow a sender.
func (e *Engine) notify(s *Sent) {
	if s == nil {
		return
	}
	e.watchMu.Lock()
	var targets []*Watcher
	var toks []*TokenInfo
	for _, tok := range s.Tokens {
		for w := range e.watchers[s.Project+"\x00"+tok] {
			targets = append(targets, w)
			toks = append(toks, &TokenInfo{Token: tok})
		}
	}
	e.watchMu.Unlock()
	if len(targets) == 0 {
		return
	}
	platforms := e.platforms(s.Tokens)
	for i, w := range targets {
		toks[i].Platform = platforms[toks[i].Token]
		w.offer(deliveryOf(s, toks[i]))
	}
}

func (e *Engine) platforms(tokens []string) map[string]Platform {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]Platform, len(tokens))
	for _, tok := range tokens {
		if t, ok := e.tokens[tok]; ok {
			out[tok] = t.Platform
		}
	}
	return out
}

// closeWatchers ends the watchers of one token (key project\x00token), or
// of every token when key is empty: a deleted token, or state that was
// reset or replaced, receives nothing more.
func (e *Engine) closeWatchers(key string) {
	e.watchMu.Lock()
	var ws []*Watcher
	for k, set := range e.watchers {
		if key == "" || k == key {
			for w := range set {
				ws = append(ws, w)
			}
		}
	}
	e.watchMu.Unlock()
	for _, w := range ws {
		w.Close()
	}
}
