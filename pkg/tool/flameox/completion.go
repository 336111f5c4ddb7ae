package flameox

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flameox/flameox/pkg/cli"
)

// completionCommands are completion bash|zsh|fish.
func completionCommands() []*Command {
	return []*Command{{Name: "completion", Args: "bash|zsh|fish",
		Summary: "a shell completion script for flameox's commands: source <(flameox completion bash), or save it where the shell loads completions",
		CLIOnly: "completes a person's shell; agents call tools by name", Run: completionCmd}}
}

// globalFlags are the flags every command takes (Run parses them first).
var globalFlags = []string{"--json", "--workspace", "-C", "--quiet", "--color=auto", "--color=always", "--color=never", "--no-color", "--help"}

// commandTree is the first words of the commands and, for each, the
// second words (verbs) under it, sorted.
func commandTree() ([]string, map[string][]string) {
	sub := map[string][]string{}
	var top []string
	for _, c := range Commands() {
		first, rest, _ := strings.Cut(c.Name, " ")
		if !slices.Contains(top, first) {
			top = append(top, first)
		}
		if rest != "" {
			verb, _, _ := strings.Cut(rest, " ")
			if !slices.Contains(sub[first], verb) {
				sub[first] = append(sub[first], verb)
			}
		}
	}
	slices.Sort(top)
	for k := range sub {
		slices.Sort(sub[k])
	}
	return top, sub
}

func completionCmd(_ context.Context, c *Context, args []string) error {
	fs := c.flags("completion", "bash|zsh|fish")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("completion needs a shell: bash, zsh or fish")
	}
	top, sub := commandTree()
	w := c.Env.Stdout
	switch fs.Arg(0) {
	case "bash":
		writeBash(w, top, sub)
	case "zsh":
		// zsh runs the bash function through bashcompinit, which keeps one
		// definition of the words for both shells.
		fmt.Fprintln(w, "#compdef flameox")
		fmt.Fprintln(w, "autoload -U +X bashcompinit && bashcompinit")
		writeBash(w, top, sub)
	case "fish":
		writeFish(w, top, sub)
	default:
		return cli.Usagef("completion: unknown shell %q (bash, zsh or fish)", fs.Arg(0))
	}
	return nil
}

func writeBash(w io.Writer, top []string, sub map[string][]string) {
	fmt.Fprintf(w, `# flameox completion for bash: source <(flameox completion bash)
_flameox() {
  local cur=${COMP_WORDS[COMP_CWORD]} i word=
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -C|--workspace) ((i++)) ;;
      -*) ;;
      *) if [[ -z $word ]]; then word=${COMP_WORDS[i]}; else COMPREPLY=(); return; fi ;;
    esac
  done
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W %q -- "$cur"))
  elif [[ -z $word ]]; then
    COMPREPLY=($(compgen -W %q -- "$cur"))
  else
    case $word in
`, strings.Join(globalFlags, " "), strings.Join(top, " "))
	for _, k := range top {
		if len(sub[k]) > 0 {
			fmt.Fprintf(w, "      %s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", k, strings.Join(sub[k], " "))
		}
	}
	fmt.Fprint(w, `      *) COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
  fi
}
complete -F _flameox flameox
`)
}

func writeFish(w io.Writer, top []string, sub map[string][]string) {
	fmt.Fprintln(w, "# flameox completion for fish: flameox completion fish > ~/.config/fish/completions/flameox.fish")
	fmt.Fprintln(w, "complete -c flameox -l json -d 'print the result as JSON'")
	fmt.Fprintln(w, "complete -c flameox -l workspace -r -d 'workspace directory'")
	fmt.Fprintln(w, "complete -c flameox -s C -r -d 'project root'")
	fmt.Fprintln(w, "complete -c flameox -s q -l quiet -d 'no progress or information on stderr'")
	fmt.Fprintln(w, "complete -c flameox -l color -x -a 'auto always never' -d 'colour'")
	fmt.Fprintln(w, "complete -c flameox -l no-color -d 'no colour'")
	fmt.Fprintf(w, "complete -c flameox -f -n __fish_use_subcommand -a %q\n", strings.Join(top, " "))
	for _, k := range top {
		if len(sub[k]) > 0 {
			fmt.Fprintf(w, "complete -c flameox -f -n '__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s' -a %q\n", k, strings.Join(sub[k], " "), strings.Join(sub[k], " "))
		}
	}
}
