package content

import (
	"fmt"
	"os"
	"strings"
)

// Supported languages. English is the fallback.
const (
	English = "en"
	Russian = "ru"
)

// Languages lists every language the content is written in.
var Languages = []string{English, Russian}

// LangEnv is the environment variable that sets the language when no flag is given.
const LangEnv = "LAB_LANG"

// Lang chooses the language to show: the flag value if set, else $LAB_LANG,
// else the locale (LC_ALL, LC_MESSAGES, LANG: the first that is set wins;
// ru, ru_RU.UTF-8 and the like mean Russian), else English.
// An explicit flag or LAB_LANG value that is not a supported language is an error.
func Lang(flag string) (string, error) {
	return LangFrom(flag, os.Getenv)
}

// LangFrom is Lang with the environment passed in, for tests and for callers
// that carry their own environment.
func LangFrom(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		lang, err := ParseLang(flag)
		if err != nil {
			return "", fmt.Errorf("--lang: %w", err)
		}
		return lang, nil
	}
	if env := getenv(LangEnv); env != "" {
		lang, err := ParseLang(env)
		if err != nil {
			return "", fmt.Errorf("%s: %w", LangEnv, err)
		}
		return lang, nil
	}
	return localeLang(getenv), nil
}

// ParseLang validates a language code (case and surrounding space ignored).
func ParseLang(value string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(value))
	for _, lang := range Languages {
		if v == lang {
			return lang, nil
		}
	}
	return "", fmt.Errorf("unsupported language %q: use one of %s", value, strings.Join(Languages, ", "))
}

// localeLang follows POSIX precedence: the first non-empty of LC_ALL,
// LC_MESSAGES and LANG decides, even when it names a language we do not have
// (LC_ALL=C then means English, whatever LANG says).
func localeLang(getenv func(string) string) string {
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		locale := getenv(name)
		if locale == "" {
			continue
		}
		// "ru", "ru_RU", "ru_RU.UTF-8", "ru_UA@euro", "ru-RU".
		code, _, _ := strings.Cut(strings.ToLower(locale), "_")
		code, _, _ = strings.Cut(code, ".")
		code, _, _ = strings.Cut(code, "@")
		code, _, _ = strings.Cut(code, "-")
		if code == Russian {
			return Russian
		}
		return English
	}
	return English
}
