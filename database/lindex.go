package database

// lindex finds the listens a commit concerns without visiting the others:
// a trie of database paths holding, at each location, the listens there
// and the listens whose read rules observed it (listener.deps). A write
// at keys concerns the listens on the path from the root to keys and
// those below keys, so a commit costs the depth of its writes plus what
// it concerns, not the number of listens in the namespace. Guarded by
// namespace.lmu.
type lindex struct {
	root lnode
}

type lnode struct {
	children map[string]*lnode
	here     map[*listener]struct{} // listens at this location
	deps     map[*listener]int      // listens that observed it (how many times)
}

func (n *lnode) empty() bool {
	return len(n.children) == 0 && len(n.here) == 0 && len(n.deps) == 0
}

// at returns the node at keys, creating it when create is set (else nil
// when absent).
func (x *lindex) at(keys []string, create bool) *lnode {
	n := &x.root
	for _, k := range keys {
		c := n.children[k]
		if c == nil {
			if !create {
				return nil
			}
			if n.children == nil {
				n.children = map[string]*lnode{}
			}
			c = &lnode{}
			n.children[k] = c
		}
		n = c
	}
	return n
}

// prune drops the empty nodes along keys, deepest first.
func (x *lindex) prune(keys []string) {
	path := make([]*lnode, 0, len(keys)+1)
	n := &x.root
	path = append(path, n)
	for _, k := range keys {
		if n = n.children[k]; n == nil {
			return
		}
		path = append(path, n)
	}
	for i := len(keys); i > 0; i-- {
		if !path[i].empty() {
			return
		}
		delete(path[i-1].children, keys[i-1])
	}
}

func (x *lindex) add(l *listener) {
	n := x.at(l.keys, true)
	if n.here == nil {
		n.here = map[*listener]struct{}{}
	}
	n.here[l] = struct{}{}
	x.addDeps(l)
}

func (x *lindex) remove(l *listener) {
	if n := x.at(l.keys, false); n != nil {
		delete(n.here, l)
		x.prune(l.keys)
	}
	x.removeDeps(l)
}

func (x *lindex) addDeps(l *listener) {
	for _, dep := range l.deps {
		n := x.at(dep, true)
		if n.deps == nil {
			n.deps = map[*listener]int{}
		}
		n.deps[l]++
	}
}

func (x *lindex) removeDeps(l *listener) {
	for _, dep := range l.deps {
		n := x.at(dep, false)
		if n == nil {
			continue
		}
		if n.deps[l]--; n.deps[l] <= 0 {
			delete(n.deps, l)
		}
		x.prune(dep)
	}
}

// setDeps replaces a listen's observed locations.
func (x *lindex) setDeps(l *listener, deps [][]string) {
	x.removeDeps(l)
	l.deps = deps
	x.addDeps(l)
}

// concerned collects the listens at, above or below the changes'
// locations (deps false), or that observed such a location (deps true):
// nil when there are none, as for most writes, which so allocate
// nothing here.
func (x *lindex) concerned(changes []change, deps bool) map[*listener]struct{} {
	var out map[*listener]struct{}
	for _, c := range changes {
		n := &x.root
		n.take(&out, deps) // the root is above every location
		for _, k := range c.keys {
			if n = n.children[k]; n == nil {
				break
			}
			n.take(&out, deps)
		}
		if n != nil {
			for _, ch := range n.children {
				ch.takeBelow(&out, deps)
			}
		}
	}
	return out
}

// take adds n's listens (deps false) or the listens that observed n
// (deps true) to *out, making it when there is one to add.
func (n *lnode) take(out *map[*listener]struct{}, deps bool) {
	if deps {
		addKeys(out, n.deps)
	} else {
		addKeys(out, n.here)
	}
}

// addKeys adds set's keys to *out, making it when there is one to add.
func addKeys[V any](out *map[*listener]struct{}, set map[*listener]V) {
	if len(set) == 0 {
		return
	}
	if *out == nil {
		*out = make(map[*listener]struct{}, len(set))
	}
	for l := range set {
		(*out)[l] = struct{}{}
	}
}

// takeBelow is take of n and of every node below it.
func (n *lnode) takeBelow(out *map[*listener]struct{}, deps bool) {
	n.take(out, deps)
	for _, c := range n.children {
		c.takeBelow(out, deps)
	}
}
