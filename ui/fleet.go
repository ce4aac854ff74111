package ui

import (
	"pitwall/gpu/telemetry"
	"strconv"
	"strings"
)

// fleet draws one line per server: its GPUs' name, utilisation and VRAM
// where telemetry has them, the models resident, slots busy of total, the
// queue and, while it is busy, the decode rate. Columns line up across
// servers.
type fleet struct {
	c             *common
	width, height int
	// idle says the run is over and no judge works: its servers hold
	// nothing of it, whatever the last mid-run sample said.
	idle bool
}

// SetSize gives the panel its width and the most lines it may use.
func (f *fleet) SetSize(w, h int) { f.width, f.height = w, h }

// lines is how many lines the panel wants for servers.
func (f *fleet) lines(servers []telemetry.ServerState, most int) int {
	return min(len(servers), most)
}

// fleetCols are the widths of the fields that grow with the screen.
type fleetCols struct {
	name, gpu, models int
	telemetry         bool // some server reports its GPUs
}

// Widths of the fleet line's fields: the growing ones start at these, the
// others keep theirs. The rate is "1234 tok/s".
const (
	fleetNameW   = 14
	fleetGPUW    = 16
	fleetModelsW = 24
	utilBarW     = 8
	fleetRest    = 3 + 2 + 2 + 10 + 11 + 10 // mark and spaces, gaps, slots, queue, rate
	gpuRest      = 2 + 1 + utilBarW + 5 + 1 + 11
)

// columns lays the fields out: each starts at its usual width, and what the
// screen has beyond the line goes to the server names, then the GPU names,
// then the models, up to what shows each whole. A wide terminal shows
// "Simulated RTX 4090" where a narrow one cuts it.
func (f *fleet) columns(servers []telemetry.ServerState) fleetCols {
	var want fleetCols
	want.name = 4
	for i := range servers {
		s := &servers[i]
		want.name = max(want.name, f.c.sw(s.Name))
		if len(s.GPUs) > 0 {
			want.telemetry = true
			want.gpu = max(want.gpu, f.c.sw(gpuName(s.GPUs)))
		}
		if s.Up {
			want.models = max(want.models, f.c.sw(f.models(s)))
		}
	}
	c := fleetCols{name: min(want.name, fleetNameW), gpu: fleetGPUW, models: fleetModelsW, telemetry: want.telemetry}
	used := fleetRest + c.name + c.models
	if c.telemetry {
		used += c.gpu + gpuRest
	}
	spare := f.width - used
	grow := func(w *int, wanted int) {
		if n := min(max(wanted-*w, 0), max(spare, 0)); n > 0 {
			*w += n
			spare -= n
		}
	}
	grow(&c.name, want.name)
	if c.telemetry {
		grow(&c.gpu, want.gpu)
	}
	grow(&c.models, want.models)
	return c
}

// View draws the panel in at most height lines.
func (f *fleet) View(servers []telemetry.ServerState) string {
	if f.height <= 0 || len(servers) == 0 {
		return ""
	}
	if f.height == 1 && len(servers) > 1 {
		return f.c.cut(f.summary(servers), f.width)
	}
	cols := f.columns(servers)
	show := servers
	more := 0
	if len(servers) > f.height {
		show = servers[:f.height-1]
		more = len(servers) - len(show)
	}
	out := make([]string, 0, f.height)
	for i := range show {
		s := show[i]
		if f.idle {
			s = idleServer(s)
		}
		out = append(out, f.c.cut(f.line(&s, cols), f.width))
	}
	if more > 0 {
		out = append(out, f.c.styles.dim.Render(" +"+strconv.Itoa(more)+" more servers"))
	}
	return strings.Join(out, "\n")
}

func (f *fleet) line(s *telemetry.ServerState, cols fleetCols) string {
	st, g := f.c.styles, f.c.glyphs
	var sb strings.Builder
	sb.WriteString(" ")
	if !s.Up {
		sb.WriteString(st.kind[kindFailed].Render(g.down))
		sb.WriteString(" ")
		sb.WriteString(f.c.fit(s.Name, cols.name))
		sb.WriteString("  down")
		if !s.DownSince.IsZero() {
			sb.WriteString(" " + clock(max(f.c.now().Sub(s.DownSince), 0)))
		}
		if s.DownReason != "" {
			sb.WriteString(": " + s.DownReason)
		}
		if s.Stranded > 0 {
			sb.WriteString(" · " + strconv.Itoa(s.Stranded) + " waiting for it")
		}
		return sb.String()
	}
	sb.WriteString(st.kind[kindOK].Render(g.up))
	sb.WriteString(" ")
	sb.WriteString(f.c.fit(s.Name, cols.name))
	if cols.telemetry {
		sb.WriteString("  ")
		sb.WriteString(f.gpus(s.GPUs, cols.gpu))
	}
	sb.WriteString("  ")
	sb.WriteString(f.c.fit(f.models(s), cols.models))
	sb.WriteString("  ")
	sb.WriteString(f.c.fit("slots "+strconv.Itoa(s.Busy)+"/"+strconv.Itoa(s.Slots), 10))
	// The queue is this server's (jobs it could run), and as wide as it
	// needs: a long one never runs into the rate.
	queue := "queue " + strconv.Itoa(s.Queue)
	sb.WriteString(f.c.fit(queue, max(11, len(queue)+1)))
	// The rate is of the last decode; an idle server is not decoding.
	if s.Busy > 0 && s.TokensPerSec > 0 {
		sb.WriteString(strconv.FormatFloat(s.TokensPerSec, 'f', 0, 64) + " tok/s")
	}
	return sb.String()
}

// idleServer is s as a finished run leaves it: no slot busy, nothing
// queued or loading, no decode, its GPUs at 0%. The last snapshot's
// telemetry was sampled mid-run; a finished run holds nothing busy.
func idleServer(s telemetry.ServerState) telemetry.ServerState {
	s.Busy, s.Queue, s.Loading, s.TokensPerSec = 0, 0, "", 0
	gs := make([]telemetry.GPUState, len(s.GPUs))
	for i, g := range s.GPUs {
		g.UtilPct = 0
		gs[i] = g
	}
	s.GPUs = gs
	return s
}

// gpuName is what the panel calls a server's GPUs: the first one's name
// without the vendor (it says little), with their count.
func gpuName(gs []telemetry.GPUState) string {
	name := strings.TrimPrefix(strings.TrimPrefix(gs[0].Name, "NVIDIA "), "AMD ")
	if len(gs) > 1 {
		name = strconv.Itoa(len(gs)) + "×" + name
	}
	return name
}

// gpus is the telemetry block: name (×count) in nameW, utilisation bar,
// VRAM. A zero field is unknown and is left blank rather than shown as zero.
func (f *fleet) gpus(gs []telemetry.GPUState, nameW int) string {
	if len(gs) == 0 {
		return strings.Repeat(" ", nameW+1+utilBarW+5+1+11)
	}
	name := gpuName(gs)
	var util, used, total float64
	utilKnown := false
	for _, g := range gs {
		util += g.UtilPct
		utilKnown = utilKnown || g.UtilPct > 0
		used += g.MemUsedMiB
		total += g.MemTotalMiB
	}
	util /= float64(len(gs))
	bar := strings.Repeat(" ", utilBarW+5)
	if f.idle && len(gs) > 0 {
		utilKnown = true // idle is known: 0%
	}
	if utilKnown {
		filled := min(int(util*utilBarW/100+0.5), utilBarW)
		bar = f.c.styles.bar.Render(strings.Repeat(f.c.glyphs.barFull, filled)) +
			f.c.styles.barEmpty.Render(strings.Repeat(f.c.glyphs.barEmpty, utilBarW-filled)) +
			f.c.fitRight(strconv.Itoa(int(util+0.5))+"%", 5)
	}
	vram := ""
	if total > 0 {
		vram = gib(used) + "/" + gib(total) + "G"
	}
	return f.c.fit(name, nameW) + " " + bar + " " + f.c.fit(vram, 11)
}

func gib(mib float64) string { return strconv.FormatFloat(mib/1024, 'f', 1, 64) }

func (f *fleet) models(s *telemetry.ServerState) string {
	if s.Loading != "" {
		return "loading " + shortModel(s.Loading) + f.c.glyphs.ellipsis
	}
	if len(s.Resident) == 0 {
		return f.c.glyphs.dash
	}
	names := make([]string, len(s.Resident))
	for i, m := range s.Resident {
		names[i] = shortModel(m)
	}
	return strings.Join(names, ", ")
}

// summary is the whole fleet on one line, for a screen with room for no more.
func (f *fleet) summary(servers []telemetry.ServerState) string {
	up, slots, busy, queue := 0, 0, 0, 0
	var tps float64
	for i := range servers {
		s := &servers[i]
		if f.idle {
			idle := idleServer(*s)
			s = &idle
		}
		if s.Up {
			up++
		}
		slots += s.Slots
		busy += s.Busy
		queue += s.Queue
		if s.Busy > 0 {
			tps += s.TokensPerSec
		}
	}
	line := " fleet: " + strconv.Itoa(up) + "/" + strconv.Itoa(len(servers)) + " up · slots " +
		strconv.Itoa(busy) + "/" + strconv.Itoa(slots) + " · queue " + strconv.Itoa(queue)
	if tps > 0 {
		line += " · " + strconv.FormatFloat(tps, 'f', 0, 64) + " tok/s"
	}
	return line
}
