package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// What the backends' model listings say of a model beyond its name, made
// up plausibly from the name and size.

// families are architectures a model name may reveal, most specific first.
var families = []string{"qwen3", "qwen2", "gemma3", "gemma", "llama", "mistral", "granite", "phi", "deepseek", "gpt-oss"}

// archOf guesses a model's architecture from its name.
func archOf(name string) string {
	n := strings.ReplaceAll(strings.ToLower(name), "-", "")
	for _, f := range families {
		if strings.Contains(n, strings.ReplaceAll(f, "-", "")) {
			return f
		}
	}
	return "llama"
}

var paramsInName = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)b\b`)

// paramSize is a parameter count like "8B": from the name, else from the
// size at about 0.6 GB per billion parameters (4-bit weights).
func paramSize(name string, sizeGB float64) string {
	if m := paramsInName.FindStringSubmatch(name); m != nil {
		return strings.ToUpper(m[1]) + "B"
	}
	return strconv.FormatFloat(math.Round(sizeGB/0.6*10)/10, 'f', -1, 64) + "B"
}

// digest is a model's made-up but stable sha256 digest.
func digest(name string) string {
	sum := sha256.Sum256([]byte("pitwall-sim/" + name))
	return hex.EncodeToString(sum[:])
}

// sizeBytes is a size in GB as bytes (GiB, as the tools report them).
func sizeBytes(gb float64) int64 { return int64(gb * (1 << 30)) }

// contextLength is the context a simulated model is loaded with unless its
// spec says (simspec.Model.Context).
const contextLength = 8192

// contextOf is the context model is loaded with.
func (s *Server) contextOf(model string) int {
	if n := s.specs[model].Context; n > 0 {
		return n
	}
	return contextLength
}

// maxContextLength is the longest context a simulated model supports.
const maxContextLength = 32768

// quantization is the weights' format every simulated model claims.
const quantization = "Q4_K_M"
