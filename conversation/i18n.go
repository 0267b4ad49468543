package conversation

import (
	"fmt"
	"strings"
	"unicode"
)

// The bot's own words in workflow threads, per language (DESIGN.md: a team working in
// Russian gets Russian options, artifacts and buttons). Artifact texts are written by
// the model in the workflow's locale; these are the labels around them. A language
// without a catalog uses English.
var catalogs = map[string]map[string]string{
	"en": {
		"started":              "*%s* started by <@%s>. %d artifacts: %s.",
		"options":              "Options for *%s*",
		"options.hint":         "Pick one with a button, or reply in this thread to pick and adjust (\"B, but shorter\").",
		"regenerate":           "Regenerate options",
		"chosen":               "Option %s chosen by <@%s>.",
		"approve":              "Approve",
		"request_changes":      "Request changes",
		"changes.title":        "Request changes",
		"changes.label":        "What should change?",
		"submit":               "Submit",
		"approved_by":          "Approved by <@%s>.",
		"evaluation":           "Evaluation",
		"artifact.hint":        "Approve it, or reply in this thread with what to change.",
		"stale.intro":          "*%s* changed, so these artifacts depend on an older version:",
		"keep":                 "Keep",
		"regen_guidance":       "Regenerate with guidance",
		"guidance.title":       "Regenerate",
		"guidance.label":       "Guidance for the new version (optional)",
		"kept":                 "*%s* kept as it was by <@%s>.",
		"not_current":          "That message is no longer current; use the newest one in the thread.",
		"not_allowed":          "Sorry, only %s may approve in this workflow.",
		"the_starter":          "the person who started it (<@%s>)",
		"approvers":            "the approvers (%s)",
		"done":                 "All artifacts of *%s* are approved. The report is attached.",
		"export":               "Export of *%s* (draft: unapproved parts are marked).",
		"cancelled":            "Workflow *%s* cancelled by <@%s>.",
		"status.title":         "*%s*: status",
		"menu.restart":         "Restart this artifact",
		"menu.edit":            "Edit this artifact",
		"edit.title":           "Edit",
		"edit.label":           "How should it change?",
		"which":                "You have several workflows running in this channel. Which one?",
		"none_running":         "You have no workflow running here. Start one with `/threadwright start <workflow>`.",
		"already_running":      "A workflow is already running in this thread: *%s*. Cancel it first with `cancel`.",
		"unknown_workflow":     "There is no workflow named `%s`. Available: %s.",
		"unknown_artifact":     "*%s* has no artifact `%s`. Its artifacts: %s.",
		"unknown_command":      "I don't know the command `%s`.",
		"no_text":              "*%s* has no text yet, so there is nothing to edit.",
		"reply_unclear":        "I couldn't tell which option you meant. Reply with a letter (A, B, …), or ask for new options.",
		"waiting_stale":        "Some artifacts are stale; choose *Keep* or *Regenerate with guidance* for each.",
		"no_items":             "I couldn't find the items of *%s* that *%s* is written for: write them as headings (## …) or a numbered list, then `edit %s` or `restart %s`.",
		"too_many_items":       "*%s* has %d items; a pipeline runs at most %d. Shorten it with `edit %s`.",
		"item.timeout":         "it did not finish in time, twice",
		"pipeline.running":     "*%s* pipeline: %s · %s elapsed",
		"pipeline.stopped":     "*%s* pipeline stopped by <@%s>: %s · %s. Finished items are kept; *Continue* runs the rest.",
		"pipeline.halted":      "*%s* pipeline stopped: %s. %s · %s. Finished items are kept; *Continue* tries the rest again.",
		"pipeline.attempts":    "it failed %d times in a row",
		"rerun_waits":          "*%s* will be written again once %s is approved.",
		"being_written":        "*%s* is being written by the pipeline: wait for it, or `restart %s`.",
		"pipeline.ended":       "*%s* pipeline ended before it finished: what it was writing depends on something that changed.",
		"pipeline.done":        "*%s* pipeline finished in %s:",
		"pipeline.cancelled":   "Pipeline ended: the workflow was cancelled.",
		"pipeline.failed":      "%d failed",
		"pipeline.items":       "%d of %d items written",
		"pipeline.item_failed": "failed after %d tries: %s",
		"pipeline.recovered":   "recovered",
		"pipeline.auto":        "Written by the pipeline (auto, no review).",
		"pipeline.full_text":   "The full text is in the report (`export`).",
		"stop":                 "Stop",
		"continue":             "Continue",
	},
	"ru": {
		"started":              "<@%[2]s> запускает *%[1]s*. Артефактов: %[3]d: %[4]s.",
		"options":              "Варианты для *%s*",
		"options.hint":         "Выберите кнопкой или ответьте в треде, чтобы выбрать и уточнить («Б, но короче»).",
		"regenerate":           "Другие варианты",
		"chosen":               "<@%[2]s> выбирает вариант %[1]s.",
		"approve":              "Утвердить",
		"request_changes":      "Попросить правки",
		"changes.title":        "Правки",
		"changes.label":        "Что изменить?",
		"submit":               "Отправить",
		"approved_by":          "Утверждено: <@%s>.",
		"evaluation":           "Оценка",
		"artifact.hint":        "Утвердите или ответьте в треде, что изменить.",
		"stale.intro":          "*%s* изменён, поэтому эти артефакты опираются на старую версию:",
		"keep":                 "Оставить",
		"regen_guidance":       "Переписать с пожеланиями",
		"guidance.title":       "Переписать",
		"guidance.label":       "Пожелания к новой версии (необязательно)",
		"kept":                 "<@%[2]s> оставляет *%[1]s* без изменений.",
		"not_current":          "Это сообщение устарело; используйте последнее в треде.",
		"not_allowed":          "Извините, утверждать в этом процессе может только %s.",
		"the_starter":          "тот, кто его запустил (<@%s>)",
		"approvers":            "утверждающие (%s)",
		"done":                 "Все артефакты *%s* утверждены. Отчёт во вложении.",
		"export":               "Выгрузка *%s* (черновик: неутверждённые части помечены).",
		"cancelled":            "<@%[2]s> отменяет *%[1]s*.",
		"status.title":         "*%s*: состояние",
		"menu.restart":         "Начать артефакт заново",
		"menu.edit":            "Изменить артефакт",
		"edit.title":           "Изменить",
		"edit.label":           "Как изменить?",
		"which":                "У вас в этом канале несколько процессов. Какой из них?",
		"none_running":         "У вас здесь нет запущенных процессов. Запустите: `/threadwright start <процесс>`.",
		"already_running":      "В этом треде уже идёт процесс *%s*. Сначала отмените его: `cancel`.",
		"unknown_workflow":     "Процесса `%s` нет. Есть: %s.",
		"unknown_artifact":     "В *%s* нет артефакта `%s`. Есть: %s.",
		"unknown_command":      "Команды `%s` нет.",
		"no_text":              "У *%s* ещё нет текста, менять нечего.",
		"reply_unclear":        "Не понял, какой вариант вы выбрали. Ответьте буквой (А, Б, …) или попросите другие варианты.",
		"waiting_stale":        "Некоторые артефакты устарели; выберите *Оставить* или *Переписать с пожеланиями* для каждого.",
		"no_items":             "Не нашёл в *%s* пунктов, по которым пишется *%s*: оформите их заголовками (## …) или нумерованным списком, затем `edit %s` или `restart %s`.",
		"too_many_items":       "В *%s* пунктов: %d; конвейер обрабатывает не больше %d. Сократите: `edit %s`.",
		"item.timeout":         "дважды не уложился во время",
		"pipeline.running":     "Конвейер *%s*: %s · прошло %s",
		"pipeline.stopped":     "Конвейер *%s* остановлен <@%s>: %s · %s. Готовые пункты сохранены; *Продолжить* выполнит остальные.",
		"pipeline.halted":      "Конвейер *%s* остановлен: %s. %s · %s. Готовые пункты сохранены; *Продолжить* попробует остальные снова.",
		"pipeline.attempts":    "он %d раз подряд завершился ошибкой",
		"rerun_waits":          "*%s* будет написан заново, когда будет утверждено: %s.",
		"being_written":        "*%s* сейчас пишет конвейер: дождитесь его или `restart %s`.",
		"pipeline.ended":       "Конвейер *%s* завершён досрочно: то, что он писал, зависит от изменившегося артефакта.",
		"pipeline.done":        "Конвейер *%s* завершён за %s:",
		"pipeline.cancelled":   "Конвейер завершён: процесс отменён.",
		"pipeline.failed":      "ошибок: %d",
		"pipeline.items":       "Готово пунктов: %d из %d",
		"pipeline.item_failed": "не удалось за %d попыток: %s",
		"pipeline.recovered":   "после восстановления",
		"pipeline.auto":        "Написано конвейером (авто, без проверки).",
		"pipeline.full_text":   "Полный текст — в отчёте (`export`).",
		"stop":                 "Остановить",
		"continue":             "Продолжить",
	},
}

// statusWords are the artifact statuses as shown to people.
var statusWords = map[string]map[ArtifactStatus]string{
	"en": {StatusPending: "pending", StatusOptionsGenerated: "options ready", StatusOptionSelected: "option chosen", StatusGenerated: "awaiting review", StatusApproved: "approved", StatusStale: "stale", StatusRunning: "running"},
	"ru": {StatusPending: "ожидает", StatusOptionsGenerated: "есть варианты", StatusOptionSelected: "вариант выбран", StatusGenerated: "на проверке", StatusApproved: "утверждён", StatusStale: "устарел", StatusRunning: "выполняется"},
}

// tr returns the text for key in lang (English when lang has none), formatted with
// args.
func tr(lang, key string, args ...any) string {
	c, ok := catalogs[lang]
	if !ok {
		c = catalogs["en"]
	}
	f, ok := c[key]
	if !ok {
		f = catalogs["en"][key]
	}
	if len(args) == 0 {
		return f
	}
	return fmt.Sprintf(f, args...)
}

// uiLang returns the catalog language for a locale tag ("ru-RU" → "ru").
func uiLang(locale string) string {
	lang, _, _ := strings.Cut(strings.ToLower(locale), "-")
	lang, _, _ = strings.Cut(lang, "_")
	if _, ok := catalogs[lang]; ok {
		return lang
	}
	return "en"
}

// textLocale guesses a language from the script of text: "ru" for mostly Cyrillic
// letters, "" when it cannot tell (too few letters, or Latin, which many languages
// share).
func textLocale(text string) string {
	var letters, cyrillic int
	for _, r := range text {
		if unicode.IsLetter(r) {
			letters++
			if unicode.Is(unicode.Cyrillic, r) {
				cyrillic++
			}
		}
	}
	if letters >= 3 && cyrillic*2 > letters {
		return "ru"
	}
	return ""
}
