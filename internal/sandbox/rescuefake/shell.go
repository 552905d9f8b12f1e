package rescuefake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// The rescue system's root shell is bash. This is the part of it the builder
// needs: words with single/double quotes and backslashes, pipelines joined by
// ";", "&&" and "||", "set -o pipefail" and "set -e".

// token is a shell word or an operator ("|", "||", "&&", ";").
type token struct {
	word string
	op   string
}

func tokenize(line string) ([]token, error) {
	var toks []token
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			toks = append(toks, token{word: cur.String()})
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unexpected EOF while looking for matching `''")
			}
			cur.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, errors.New("unexpected EOF while looking for matching `\"'")
			}
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '|' || c == '&' || c == ';':
			flush()
			op := string(c)
			if i+1 < len(line) && c != ';' && line[i+1] == c {
				op += string(c)
				i++
			}
			if op == "&" {
				return nil, errors.New("syntax error: background jobs are not supported by the rescue fake")
			}
			toks = append(toks, token{op: op})
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return toks, nil
}

// pipeline is a list of commands joined by "|", run after its connector
// ("", ";", "&&", "||") allows it.
type pipeline struct {
	connector string
	cmds      [][]string
}

func parse(line string) ([]pipeline, error) {
	toks, err := tokenize(line)
	if err != nil {
		return nil, err
	}
	var out []pipeline
	cur := pipeline{}
	var argv []string
	endCmd := func(op string) error {
		if len(argv) == 0 {
			return fmt.Errorf("syntax error near unexpected token `%s'", op)
		}
		cur.cmds = append(cur.cmds, argv)
		argv = nil
		return nil
	}
	for _, t := range toks {
		switch t.op {
		case "":
			argv = append(argv, t.word)
		case "|":
			if err := endCmd(t.op); err != nil {
				return nil, err
			}
		default:
			if len(argv) == 0 && t.op == ";" && len(cur.cmds) == 0 {
				continue // empty statement such as a trailing ";"
			}
			if err := endCmd(t.op); err != nil {
				return nil, err
			}
			out = append(out, cur)
			cur = pipeline{connector: t.op}
		}
	}
	if len(argv) > 0 {
		cur.cmds = append(cur.cmds, argv)
	} else if len(cur.cmds) > 0 || cur.connector == "&&" || cur.connector == "||" || cur.connector == "|" {
		return nil, errors.New("syntax error: unexpected end of command")
	}
	if len(cur.cmds) > 0 {
		out = append(out, cur)
	}
	return out, nil
}

// shell holds the options "set" changes during one exec request.
type shell struct {
	pipefail bool
	errexit  bool
}

// run records and executes one exec request, returning its exit status.
func (s *Server) run(ctx context.Context, line string, stdout io.Writer, stderr io.Writer) int {
	s.record(line)
	errw := &lockedWriter{w: stderr}
	pls, err := parse(line)
	if err != nil {
		fmt.Fprintf(errw, "bash: -c: line 1: %v\n", err)
		return 2
	}
	sh := &shell{}
	status := 0
	for _, pl := range pls {
		if (pl.connector == "&&" && status != 0) || (pl.connector == "||" && status == 0) {
			continue
		}
		status = s.runPipeline(ctx, sh, pl.cmds, stdout, errw)
		if ctx.Err() != nil {
			return 255
		}
		if sh.errexit && status != 0 {
			return status
		}
	}
	return status
}

// runPipeline connects the commands with pipes and runs them concurrently,
// as bash does. The status is the last command's, or with pipefail the last
// non-zero one.
func (s *Server) runPipeline(ctx context.Context, sh *shell, cmds [][]string, stdout, stderr io.Writer) int {
	if len(cmds) == 1 && cmds[0][0] == "set" {
		return sh.set(cmds[0][1:], stderr)
	}
	statuses := make([]int, len(cmds))
	var wg sync.WaitGroup
	var in io.Reader = eofReader{} // exec sessions get no input from the builder
	for i, argv := range cmds {
		var out io.Writer = stdout
		var pw *io.PipeWriter
		var next *io.PipeReader
		if i < len(cmds)-1 {
			next, pw = io.Pipe()
			out = pw
		}
		wg.Add(1)
		go func(i int, argv []string, in io.Reader, out io.Writer, pw *io.PipeWriter) {
			defer wg.Done()
			statuses[i] = s.exec(ctx, argv, in, out, stderr)
			if pw != nil {
				_ = pw.Close() // EOF for the next command
			}
			if pr, ok := in.(*io.PipeReader); ok {
				_ = pr.CloseWithError(errBrokenPipe) // the previous command's writes fail
			}
		}(i, argv, in, out, pw)
		in = next
	}
	wg.Wait()
	status := statuses[len(statuses)-1]
	if sh.pipefail {
		for _, st := range statuses {
			if st != 0 {
				status = st
			}
		}
	}
	return status
}

// set handles the bash builtin for the options the builder uses.
func (sh *shell) set(args []string, stderr io.Writer) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || len(a) < 2 {
			fmt.Fprintf(stderr, "bash: set: %s: invalid option\n", a)
			return 2
		}
		for _, f := range a[1:] {
			switch f {
			case 'e':
				sh.errexit = true
			case 'u', 'x':
			case 'o':
				if i+1 >= len(args) {
					fmt.Fprintln(stderr, "bash: set: -o: option requires an argument")
					return 2
				}
				i++
				switch args[i] {
				case "pipefail":
					sh.pipefail = true
				case "errexit":
					sh.errexit = true
				case "nounset":
				default:
					fmt.Fprintf(stderr, "bash: set: %s: invalid option name\n", args[i])
					return 2
				}
			default:
				fmt.Fprintf(stderr, "bash: set: -%c: invalid option\n", f)
				return 2
			}
		}
	}
	return 0
}

var errBrokenPipe = errors.New("broken pipe")

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// lockedWriter keeps the stderr lines of concurrent pipeline stages whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
