package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/content"
	"github.com/operator-lab/lab/labs"
)

// What several verbs share: their common flags, their argument forms and
// how they show a folder.

// addLangFlag adds --lang (default: $LAB_LANG, else the locale).
func addLangFlag(c *cobra.Command, lang *string) {
	c.Flags().StringVar(lang, "lang", "", "language of instructions and hints: en or ru (default $"+content.LangEnv+", else the locale)")
}

// addWorkspaceFlag adds --dir for verbs that work in an existing workspace.
func addWorkspaceFlag(c *cobra.Command, dir *string) {
	c.Flags().StringVar(dir, "dir", "", "workspace folder (default: the one you are in, or ./lab-LAB)")
}

// resolveLang replaces lang (a --lang value, or "") with the language it
// chooses, or says why it cannot.
func resolveLang(lang *string) error {
	l, err := content.Lang(*lang)
	if err != nil {
		return err
	}
	*lang = l
	return nil
}

// checkLabArg returns the error for an unknown lab id ("" is no lab named).
func checkLabArg(id string) error {
	if id == "" {
		return nil
	}
	_, err := labs.Get(id)
	return err
}

// splitLabAndExercise reads "[LAB] [EXERCISE]" arguments: a first argument
// that names a lab is the lab.
func splitLabAndExercise(args []string) (labID, exercise string, err error) {
	switch len(args) {
	case 0:
		return "", "", nil
	case 1:
		if _, err := labs.Get(args[0]); err == nil {
			return args[0], "", nil
		}
		return "", args[0], nil
	case 2:
		return args[0], args[1], checkLabArg(args[0])
	default:
		return "", "", fmt.Errorf("expected at most LAB and EXERCISE, got %d arguments", len(args))
	}
}

// displayDir shows a folder relative to the current one when that is shorter.
func displayDir(dir string) string {
	wd, err := os.Getwd()
	if err != nil {
		return dir
	}
	if rel, err := filepath.Rel(wd, dir); err == nil && !strings.HasPrefix(rel, "..") {
		if rel == "." {
			return "."
		}
		return "./" + rel
	}
	return dir
}

// labTitle is the lab's title in the language --lang (langFlag) chooses
// ("" for an unknown lab).
func labTitle(id, langFlag string) string {
	if l, err := labs.Get(id); err == nil {
		return l.Title.In(viewLang(langFlag))
	}
	return ""
}

// viewLang is the language the live view speaks for a --lang value:
// content.Lang's choice, English for one it refuses (the view's lesson
// pane reports that error itself).
func viewLang(langFlag string) string {
	lang, err := content.Lang(langFlag)
	if err != nil {
		return content.English
	}
	return lang
}
