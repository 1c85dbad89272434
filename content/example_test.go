package content_test

import (
	"fmt"
	"strings"

	"github.com/operator-lab/lab/content"
)

func ExampleLoad() {
	lesson, err := content.Load("4.4", content.English)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range lesson.Sections[:3] {
		fmt.Printf("%s: %s\n", s.ID, s.Title)
	}
	// Output:
	// multi-phase: Multi-phase reconciliation
	// state-machine: A state machine for the phases
	// external-deps: External dependencies
}

func ExampleDemo_RunArgs() {
	lesson, _ := content.Load("3.1", content.Russian)
	section, _ := lesson.Section("result")
	fmt.Println(section.Demo)
	fmt.Println("lab " + strings.Join(section.Demo.RunArgs(), " "))
	// Output:
	// scenario external-outage, requeue=error
	// lab run 3.1 --scenario external-outage --set requeue=error
}
