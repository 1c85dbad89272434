package l10n

// The Russian of the command line's reports and messages: the grader's
// report, the workspace's README, the text lab adds to a lesson.
var russianCLI = map[string]string{
	// checker: the human report.
	"grade|passed":               "пройдено",
	"grade|failed":               "не пройдено",
	"grade|error":                "ошибка",
	"error":                      "ошибка",
	"\n%d of %d passed in %s.\n": "\nПройдено %d из %d за %s.\n",
	"Score: %d of %d points.\n":  "Баллы: %d из %d.\n",
	" · %d/%d points":            " · баллы: %d/%d",
	"Build folder kept at %s\n":  "Папка сборки сохранена: %s\n",
	"    hint %d/%d: %s\n":       "    подсказка %d/%d: %s\n",
	"    hint %d/%d (lab hint: the next one): %s\n": "    подсказка %d/%d (lab hint — следующая): %s\n",

	// labs/workspace: the README's first line.
	"Check your work with `lab check`; stuck? `lab hint`; progress: `lab list`.": "Проверка: `lab check`. Подсказка: `lab hint`. Прогресс: `lab list`.",
	"## Handing in your work\n\nThe workspace is a Git repository's worth of files, ready to push as it is:\n\n    git init && git add . && git commit -m \"my work\"\n    git remote add origin <your repository's URL> && git push -u origin HEAD\n\n.gitignore leaves out lab's own state (.lab/) and report files. In a class\nthat grades with GitHub Classroom, `lab classroom init` adds the workflow\nthat grades every push (.github/workflows/classroom.yml) and classroom.yaml,\nwhat each exercise is worth; push them too. Every push is then graded by the\nsame checks as `lab check`.\n": "## Как сдать работу\n\nРабочая папка — готовый Git-репозиторий: отправляйте её как есть.\n\n    git init && git add . && git commit -m \"моя работа\"\n    git remote add origin <адрес вашего репозитория> && git push -u origin HEAD\n\n.gitignore не пускает в репозиторий состояние lab (.lab/) и файлы отчётов.\nЕсли курс проверяет работы через GitHub Classroom, `lab classroom init`\nдобавит workflow, который проверяет каждый push (.github/workflows/classroom.yml),\nи classroom.yaml — сколько баллов стоит каждое упражнение; отправьте и их.\nКаждый push проверяется теми же проверками, что и `lab check`.\n",

	// content: what lab adds to a lesson.
	"Sections": "Разделы",
	"See it on the running operator (in `lab start`, open the lesson with `L` and press `w` in this section):": "Посмотрите на работающем операторе (в `lab start` откройте урок клавишей `L` и нажмите `w` в этом разделе):",
	"| You return | Queue calls, in order | Reconciled again |":                                                "| Что вернули | Вызовы очереди по порядку | Следующий Reconcile |",
	"on the next event":              "по следующему событию",
	"after `d`; failures reset":      "через `d`; счётчик неудач сброшен",
	"after the rate limiter's delay": "через задержку rate limiter",
	"deprecated":                     "устарело",
	"`RequeueAfter` ignored, an info line \"Warning: …\" logged":                                                                               "`RequeueAfter` игнорируется, в логе info-строка «Warning: …»",
	"counted as an error and as a terminal error; failure count kept":                                                                          "учитывается и как ошибка, и как терминальная; счётчик неудач не сбрасывается",
	"The rate limiter's delay is %s·2ⁿ for the n-th failure of the key in a row (n from 0): %s, %s, %s, … at most %s. `Forget` resets n to 0.": "Задержка ограничителя частоты очереди — %s·2ⁿ для n-й неудачи ключа подряд (n с нуля): %s, %s, %s, … не больше %s. `Forget` сбрасывает n в 0.",
}

var russianCLICounts = map[string][3]string{}
