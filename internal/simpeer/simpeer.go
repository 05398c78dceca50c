package simpeer

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// EnvBinary names the environment variable that overrides the binary's path.
const EnvBinary = "CAPSIM_INFERENCE_SIM"

// Binary returns the simulator's path, or "" and why it is missing.
func Binary() (string, string) {
	if p := os.Getenv(EnvBinary); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("%s=%s: %v", EnvBinary, p, err)
		}
		return p, ""
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err.Error()
	}
	p := filepath.Join(root, "tools", "bin", "llm-d-inference-sim")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Sprintf("%s not built (run `make tools`, or set %s)", p, EnvBinary)
	}
	return p, ""
}

// moduleRoot walks up from the working directory to capsim's go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/capsim/capsim\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("simpeer: capsim's go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Server is a running simulator.
type Server struct {
	URL    string // http://127.0.0.1:PORT
	cmd    *exec.Cmd
	log    *syncBuffer
	exited chan error
}

// Log returns what the simulator has written so far.
func (s *Server) Log() string { return s.log.String() }

// Start runs the simulator with args (plus --port) and waits until it
// answers. It skips the test when the binary is absent outside CI.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	bin, why := Binary()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("llm-d-inference-sim is required under CI: %s", why)
		}
		t.Skipf("skipping end-to-end test against llm-d-inference-sim: %s", why)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken between probe and bind
		s, err := start(bin, args)
		if err == nil {
			t.Cleanup(s.stop)
			return s
		}
		lastErr = err
	}
	t.Fatalf("starting llm-d-inference-sim: %v", lastErr)
	return nil
}

func start(bin string, args []string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	log := &syncBuffer{}
	cmd := exec.Command(bin, append(append([]string{}, args...), "--port", strconv.Itoa(port))...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, log: log, exited: exited}
	deadline := time.Now().Add(15 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("simpeer: exited early (%w): %s", err, lastLines(log.String(), 5))
		default:
		}
		resp, err := client.Get(s.URL + "/v1/models")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-exited
	return nil, fmt.Errorf("simpeer: not ready after 15 s: %s", lastLines(log.String(), 5))
}

// stop kills the simulator and waits for it to exit.
func (s *Server) stop() {
	s.cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// syncBuffer is a bytes.Buffer safe for the process's writers and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// RetryTiming runs measure up to four times, pausing between attempts, and
// fails the test with the last attempt's problems only if every attempt had
// some. End-to-end timing checks compare medians against the simulator's
// configured latencies with a few milliseconds of tolerance; when other
// processes load a small machine the simulator itself runs late for a while,
// which no client can tell from a slow server. A systematic error (a wrong
// chunk taken as the first token, a wrong formula) fails every attempt.
// Exact checks (token counts, failures) belong inside measure as t.Fatal
// calls.
func RetryTiming(t testing.TB, measure func() (problems []string)) {
	t.Helper()
	const attempts = 4
	for attempt := 1; ; attempt++ {
		problems := measure()
		if len(problems) == 0 {
			return
		}
		if attempt == attempts {
			for _, p := range problems {
				t.Error(p)
			}
			if load, err := os.ReadFile("/proc/loadavg"); err == nil {
				t.Logf("load average %s(a busy machine delays the simulator and the client alike)", load)
			}
			return
		}
		t.Logf("attempt %d: %s; measuring again", attempt, strings.Join(problems, "; "))
		time.Sleep(time.Duration(attempt) * time.Second)
	}
}
