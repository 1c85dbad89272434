package cmd

import (
	"github.com/spf13/cobra"

	"github.com/operator-lab/lab/content"
)

// The flags several verbs share, declared once.

// addLangFlag adds --lang (default: $LAB_LANG, else the locale).
func addLangFlag(c *cobra.Command, lang *string) {
	c.Flags().StringVar(lang, "lang", "", "language of instructions and hints: en or ru (default $"+content.LangEnv+", else the locale)")
}

// addWorkspaceFlag adds --dir for verbs that work in an existing workspace.
func addWorkspaceFlag(c *cobra.Command, dir *string) {
	c.Flags().StringVar(dir, "dir", "", "workspace folder (default: the one you are in, or ./lab-LAB)")
}
