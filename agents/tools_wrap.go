package agents

// Wrap replaces every tool registered in r by wrap(spec, tool), for decorators that
// observe the calls (package metrics counts and times them). Tools registered later
// are not wrapped.
func (r *Registry) Wrap(wrap func(ToolSpec, Tool) Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, t := range r.tools {
		t.tool = wrap(t.spec, t.tool)
		r.tools[name] = t
	}
}
