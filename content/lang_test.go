package content

import (
	"strings"
	"testing"
)

func TestLangFrom(t *testing.T) {
	tests := []struct {
		name string
		flag string
		env  map[string]string
		want string
	}{
		{name: "nothing set", want: English},
		{name: "flag wins over everything", flag: "ru", env: map[string]string{LangEnv: "en", "LANG": "en_US.UTF-8"}, want: Russian},
		{name: "flag is case-insensitive", flag: " RU ", want: Russian},
		{name: "LAB_LANG wins over the locale", env: map[string]string{LangEnv: "en", "LANG": "ru_RU.UTF-8"}, want: English},
		{name: "LAB_LANG alone", env: map[string]string{LangEnv: "ru"}, want: Russian},
		{name: "LANG ru_RU.UTF-8", env: map[string]string{"LANG": "ru_RU.UTF-8"}, want: Russian},
		{name: "LANG ru", env: map[string]string{"LANG": "ru"}, want: Russian},
		{name: "LANG ru_UA@euro", env: map[string]string{"LANG": "ru_UA@euro"}, want: Russian},
		{name: "LANG de_DE falls back to English", env: map[string]string{"LANG": "de_DE.UTF-8"}, want: English},
		{name: "LC_MESSAGES wins over LANG", env: map[string]string{"LC_MESSAGES": "ru_RU.UTF-8", "LANG": "en_US.UTF-8"}, want: Russian},
		{name: "LC_ALL wins over LC_MESSAGES", env: map[string]string{"LC_ALL": "en_US.UTF-8", "LC_MESSAGES": "ru_RU.UTF-8"}, want: English},
		{name: "LC_ALL=C means English even with LANG=ru", env: map[string]string{"LC_ALL": "C", "LANG": "ru_RU.UTF-8"}, want: English},
		{name: "russian is not ru", env: map[string]string{"LANG": "rus"}, want: English},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LangFrom(tt.flag, func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatalf("LangFrom: %v", err)
			}
			if got != tt.want {
				t.Errorf("LangFrom(%q, %v) = %q, want %q", tt.flag, tt.env, got, tt.want)
			}
		})
	}
}

func TestLangRejectsUnsupported(t *testing.T) {
	for _, tc := range []struct {
		flag, env, mention string
	}{
		{flag: "de", mention: "--lang"},
		{flag: "russian", mention: "--lang"},
		{env: "fr", mention: LangEnv},
	} {
		_, err := LangFrom(tc.flag, func(k string) string {
			if k == LangEnv {
				return tc.env
			}
			return ""
		})
		if err == nil {
			t.Fatalf("flag %q, %s=%q: no error", tc.flag, LangEnv, tc.env)
		}
		for _, want := range []string{tc.mention, "en, ru"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
	}
}
