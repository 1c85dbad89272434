package cmd

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
)

// crashCommands panic on purpose, in the main goroutine and in another
// one, each after leaving a file in lab's private temp folder: a crash must
// still end with one line, a crash file and no temp folder left.
func crashCommands() []*cobra.Command {
	holdTemp := func(cmd *cobra.Command) error {
		f, err := os.CreateTemp("", "held-by-the-crash-*")
		if err != nil {
			return fmt.Errorf("create a temp file: %w", err)
		}
		fmt.Fprintln(cmd.OutOrStdout(), "holding", f.Name())
		return f.Close()
	}
	return []*cobra.Command{
		{
			Use: "panic", Hidden: true,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if err := holdTemp(cmd); err != nil {
					return err
				}
				panic("a deliberate panic")
			},
		},
		{
			Use: "panic-in-goroutine", Hidden: true,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if err := holdTemp(cmd); err != nil {
					return err
				}
				goGuarded(func() { panic("a deliberate panic off the main goroutine") })
				select {
				case <-cmd.Context().Done():
				case <-time.After(10 * time.Second):
				}
				return fmt.Errorf("the panic did not end lab")
			},
		},
	}
}
