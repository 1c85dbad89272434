package l10n

// russian maps each English interface text to its Russian; russianCounts
// holds, under a count's English "one" form, Russian's three forms (for 1,
// for 2–4, for 5: see russianForm). Keep each key's verbs (%s, %d, %v) in
// the same order in its translation.
//
// The catalog is written in parts, one per area of lab, each in its own
// file; a key belongs to one part (the catalog test says where it is used).
var (
	russian       = joinTexts(russianCLI, russianFrame, russianPanes)
	russianCounts = joinCounts(russianCLICounts, russianFrameCounts, russianPanesCounts)
)

func joinTexts(parts ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, p := range parts {
		for k, v := range p {
			out[k] = v
		}
	}
	return out
}

func joinCounts(parts ...map[string][3]string) map[string][3]string {
	out := map[string][3]string{}
	for _, p := range parts {
		for k, v := range p {
			out[k] = v
		}
	}
	return out
}
