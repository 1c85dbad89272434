package l10n

// The Russian of the live view's frame: header, footer, help overlay, status line, start-up.
var russianFrame = map[string]string{}

var russianFrameCounts = map[string][3]string{}
