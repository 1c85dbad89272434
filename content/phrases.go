package content

// localized is a short piece of interface text in every language.
type localized struct{ en, ru string }

func (t localized) in(lang string) string {
	if lang == Russian {
		return t.ru
	}
	return t.en
}

var (
	phraseSections = localized{en: "Sections", ru: "Разделы"}
	phraseTryIt    = localized{
		en: "See it on the running operator (in `lab start`, open the lesson with `L` and press `w` in this section):",
		ru: "Посмотрите на работающем операторе (в `lab start` откройте урок клавишей `L` и нажмите `w` в этом разделе):",
	}
)
