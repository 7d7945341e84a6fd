// Package metrics exposes Prometheus metrics: the Temporal SDK's own (the
// SDK reports through Handler), the task workflows' and activities' (also
// through the SDK's handler, which is replay-safe in workflow code), and
// the frontend's.
package metrics

import (
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/sdk/client"
)

// Registry holds one process's metrics.
type Registry struct {
	reg *prometheus.Registry

	mu         sync.Mutex
	counters   map[string]*prometheus.CounterVec
	gauges     map[string]*prometheus.GaugeVec
	histograms map[string]*prometheus.HistogramVec
}

// New makes a registry with the Go runtime's metrics.
func New() *Registry {
	r := &Registry{reg: prometheus.NewRegistry(), counters: map[string]*prometheus.CounterVec{},
		gauges: map[string]*prometheus.GaugeVec{}, histograms: map[string]*prometheus.HistogramVec{}}
	r.reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return r
}

// HTTP serves the metrics in Prometheus's text format.
func (r *Registry) HTTP() http.Handler { return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{}) }

// MustRegister adds a collector.
func (r *Registry) MustRegister(c prometheus.Collector) { r.reg.MustRegister(c) }

// Handler is the SDK's metrics handler over this registry.
func (r *Registry) Handler() client.MetricsHandler { return newHandler(r, nil) }

// nameReplacer is read-only once made: safe to share.
var nameReplacer = strings.NewReplacer(".", "_", "-", "_")

func name(n string) string { return nameReplacer.Replace(n) }

// tagSet is a handler's tags as Prometheus wants them, worked out once per
// handler rather than on every recording (the SDK records several metrics
// per workflow task).
type tagSet struct {
	keys   []string // label names, sorted
	labels prometheus.Labels
	id     string // the label names joined: part of a vector's key
}

func newTagSet(tags map[string]string) tagSet {
	t := tagSet{keys: make([]string, 0, len(tags)), labels: prometheus.Labels{}}
	for k, v := range tags {
		t.keys = append(t.keys, name(k))
		t.labels[name(k)] = v
	}
	sort.Strings(t.keys)
	t.id = strings.Join(t.keys, ",")
	return t
}

// vecKey keys a metric by name and label names: the SDK may use one name
// with different tag sets.
func vecKey(n string, t tagSet) string { return n + "|" + t.id }

func (r *Registry) counter(n string, t tagSet) prometheus.Counter {
	ks, k := t.keys, vecKey(n, t)
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.counters[k]
	if !ok {
		v = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name(n) + "_total", Help: n}, ks)
		if err := r.reg.Register(v); err != nil {
			if are, isDup := err.(prometheus.AlreadyRegisteredError); isDup {
				v = are.ExistingCollector.(*prometheus.CounterVec)
			} else {
				return prometheus.NewCounter(prometheus.CounterOpts{Name: "unregistered"})
			}
		}
		r.counters[k] = v
	}
	c, err := v.GetMetricWith(t.labels)
	if err != nil {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "unregistered"})
	}
	return c
}

func (r *Registry) gauge(n string, t tagSet) prometheus.Gauge {
	ks, k := t.keys, vecKey(n, t)
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.gauges[k]
	if !ok {
		v = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name(n), Help: n}, ks)
		if err := r.reg.Register(v); err != nil {
			if are, isDup := err.(prometheus.AlreadyRegisteredError); isDup {
				v = are.ExistingCollector.(*prometheus.GaugeVec)
			} else {
				return prometheus.NewGauge(prometheus.GaugeOpts{Name: "unregistered"})
			}
		}
		r.gauges[k] = v
	}
	g, err := v.GetMetricWith(t.labels)
	if err != nil {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: "unregistered"})
	}
	return g
}

func (r *Registry) histogram(n string, t tagSet) prometheus.Observer {
	ks, k := t.keys, vecKey(n, t)
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.histograms[k]
	if !ok {
		v = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name(n) + "_seconds", Help: n, Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}, ks)
		if err := r.reg.Register(v); err != nil {
			if are, isDup := err.(prometheus.AlreadyRegisteredError); isDup {
				v = are.ExistingCollector.(*prometheus.HistogramVec)
			} else {
				return prometheus.NewHistogram(prometheus.HistogramOpts{Name: "unregistered"})
			}
		}
		r.histograms[k] = v
	}
	h, err := v.GetMetricWith(t.labels)
	if err != nil {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: "unregistered"})
	}
	return h
}

type handler struct {
	r    *Registry
	tags map[string]string
	set  tagSet
}

func newHandler(r *Registry, tags map[string]string) handler {
	return handler{r: r, tags: tags, set: newTagSet(tags)}
}

func (h handler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := make(map[string]string, len(h.tags)+len(tags))
	for k, v := range h.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return newHandler(h.r, merged)
}

func (h handler) Counter(n string) client.MetricsCounter { return counter{h.r.counter(n, h.set)} }
func (h handler) Gauge(n string) client.MetricsGauge     { return gauge{h.r.gauge(n, h.set)} }
func (h handler) Timer(n string) client.MetricsTimer     { return timer{h.r.histogram(n, h.set)} }

type counter struct{ c prometheus.Counter }

func (c counter) Inc(d int64) { c.c.Add(float64(d)) }

type gauge struct{ g prometheus.Gauge }

func (g gauge) Update(v float64) { g.g.Set(v) }

type timer struct{ o prometheus.Observer }

func (t timer) Record(d time.Duration) { t.o.Observe(d.Seconds()) }

// StateCounter counts tasks in one state (from Temporal's visibility store).
type StateCounter func(state string) (int64, error)

// TaskStates is a collector of the number of tasks in each state, read
// when Prometheus scrapes.
func TaskStates(states []string, count StateCounter) prometheus.Collector {
	return &taskStates{states: states, count: count,
		desc: prometheus.NewDesc("a2a_tasks", "tasks by state (Temporal visibility)", []string{"state"}, nil)}
}

type taskStates struct {
	states []string
	count  StateCounter
	desc   *prometheus.Desc
}

func (t *taskStates) Describe(ch chan<- *prometheus.Desc) { ch <- t.desc }

func (t *taskStates) Collect(ch chan<- prometheus.Metric) {
	for _, s := range t.states {
		if n, err := t.count(s); err == nil {
			ch <- prometheus.MustNewConstMetric(t.desc, prometheus.GaugeValue, float64(n), s)
		}
	}
}
