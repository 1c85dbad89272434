package l10n

// The Russian of the command line's reports and messages (checker, workspace, cmd).
var russianCLI = map[string]string{}

var russianCLICounts = map[string][3]string{}
