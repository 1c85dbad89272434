package switches_test

import (
	"testing"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/operator/switches"
)

// TestEffectsInRussian: the live view says, in the learner's language,
// what every value of every switch does; Effect stays English.
func TestEffectsInRussian(t *testing.T) {
	ru := l10n.For("ru")
	for _, info := range switches.All() {
		values := info.Valid
		if values == nil { // a numeric switch
			values = []string{"1", "3"}
		}
		for _, v := range values {
			en, got := switches.Effect(info.Name, v), switches.EffectIn(ru, info.Name, v)
			if got == "" || got == en {
				t.Errorf("%s=%s: the Russian effect is %q (English %q)", info.Name, v, got, en)
			}
			if en != switches.EffectIn(l10n.Printer{}, info.Name, v) {
				t.Errorf("%s=%s: Effect and EffectIn in English differ", info.Name, v)
			}
		}
	}
	for _, c := range []struct{ name, value, want string }{
		{switches.NameExternal, "not-ready", "имитируемая внешняя система теперь not-ready"},
		{switches.NameTimescale, "10", "задержки, которые выбирает оператор, делятся на 10"},
		{switches.NameRequeue, "sometimes", ""},
	} {
		if got := switches.EffectIn(ru, c.name, c.value); got != c.want {
			t.Errorf("EffectIn(ru, %s, %s) = %q, want %q", c.name, c.value, got, c.want)
		}
	}
}

func TestBelongsInRussian(t *testing.T) {
	ru := l10n.For("ru")
	const want = "переключатель breaker относится к лаборатории 4.4; контроллер лаборатории 3.1 его не использует"
	if got := switches.BelongsIn(ru, switches.NameBreaker, "3.1"); got != want {
		t.Errorf("BelongsIn(ru) = %q, want %q", got, want)
	}
	if got := switches.Belongs(switches.NameBreaker, "3.1"); got != "switch breaker belongs to lab 4.4; lab 3.1's controller does not use it" {
		t.Errorf("Belongs = %q", got)
	}
}
