package l10n

// The Russian of the live view's panes, the reconcile detail, the lesson and exercise layers.
var russianPanes = map[string]string{}

var russianPanesCounts = map[string][3]string{}
