package demo

// The canned content of the built-in blog workflow (prompts/workflows/blog.yaml): one
// fictional-but-plausible topic, async stand-ups for small teams. Each of six angles
// (the outline's options, three proposed at a time) picks five sections from one pool
// and puts them in its own order, so the outline, the research, the drafts and the
// article follow the option chosen. Every fact is canned and every source is a
// placeholder under https://example.com/demo/, marked as a demo source wherever it
// appears.

// blogSection is one section of the pool: its heading, its brief in the outline, its
// research notes and the parts of its draft.
type blogSection struct {
	// Title is the section's "## " heading.
	Title string
	// Brief is what the outline says the section covers: one or two sentences.
	Brief string
	// Facts are the research notes (three or four).
	Facts []blogFact
	// Lead opens the draft; Practice is its practical advice and Close ends it.
	Lead, Practice, Close string
}

// blogFact is one research note: a sentence without its full stop, and the slug of
// its demo source (https://example.com/demo/<slug>).
type blogFact struct{ Text, Slug string }

// blogAngle is one option of the outline: an angle on the topic for a reader.
type blogAngle struct {
	// Option is the option's title (a button) and ArticleTitle the working title.
	Option, ArticleTitle string
	// Angle is the article's main claim, one sentence; Audience who reads it.
	Angle, Audience string
	// Sections are keys of blogPool, in the article's order.
	Sections []string
	// Custom, when set, are the sections themselves (an angle on a topic the pool
	// does not cover: topicAngles), in order, in place of the pool's.
	Custom []blogSection
	// Meta is the meta description (at most 160 characters).
	Meta string
	// TLDR are the TL;DR's bullets, matching the sections' facts.
	TLDR []string
	// Intro opens the article; Conclusion ends it.
	Intro, Conclusion string
}

var blogAngles = []blogAngle{
	{
		Option:       "A step-by-step playbook",
		ArticleTitle: "Async Stand-ups for Small Teams: A Step-by-Step Playbook",
		Angle:        "A small team can replace its daily stand-up with a written one in five concrete steps, and know within a month whether it works.",
		Audience:     "Leads of teams of three to ten people who run a daily stand-up today and know the usual three questions, but have not tried written updates.",
		Sections:     []string{"why", "format", "timing", "blockers", "review"},
		Meta:         "How small teams can swap the daily stand-up for a written one: the format, a posting window, blockers and a review after a month.",
		TLDR: []string{
			"A live stand-up for five people costs more than six hours of meeting time a week, and most updates matter to only one or two listeners.",
			"Three written questions, posted in a morning window, keep a small team in sync without a meeting.",
			"Mark blockers clearly, and review the experiment together after four weeks.",
		},
		Intro:      "If your daily stand-up has turned into fifteen minutes of status reports, you are not alone. This playbook walks a small team through replacing it with a written, asynchronous stand-up in five steps, from why the meeting drifts to how to check, a month later, whether the change worked.",
		Conclusion: "An async stand-up is a small change with a large effect: the team keeps the rhythm of a daily check-in and gets its mornings back. Start with the three questions, give them a window, make blockers loud, and review after a month. Keep what works, drop what does not, and let the team own the result.",
	},
	{
		Option:       "Lessons from a five-person team",
		ArticleTitle: "Going Async: What a Five-Person Team Learned About Stand-ups",
		Angle:        "A five-person team's first month shows that async stand-ups succeed on a few small agreements, not on tools.",
		Audience:     "Members and leads of small remote teams who are curious how the switch plays out in practice; no experience with async work is assumed.",
		Sections:     []string{"case", "format", "pitfalls", "live", "review"},
		Meta:         "A fictional five-person team swaps its daily call for written stand-ups: what worked, what went wrong and what it kept after a month.",
		TLDR: []string{
			"Fernhill, a fictional five-person team across three time zones, swapped its daily call for written updates.",
			"Short, predictable updates and quick reactions kept the habit alive; long reports and silence nearly ended it.",
			"One weekly call stayed, and a review after four weeks let the team keep what worked.",
		},
		Intro:      "Stories about remote work usually feature large companies with whole teams behind their tools. This one follows Fernhill, a fictional five-person studio, through its first month of written stand-ups: where it started, the format it chose, what went wrong, what it kept live and how it judged the result.",
		Conclusion: "Fernhill's month shows that going async is less about tools than about a handful of agreements: a short format, a habit of reading, one live call and an honest review. Any small team can make the same agreements in an afternoon and test them for four weeks, starting with next Monday's stand-up.",
	},
	{
		Option:       "Async or live? An honest comparison",
		ArticleTitle: "Async or Live? How Small Teams Should Run Their Stand-ups",
		Angle:        "Written updates beat live stand-ups for most small teams, as long as one live touchpoint a week stays.",
		Audience:     "Small-team leads on the fence, who know live stand-ups well and want the trade-offs before they try written ones.",
		Sections:     []string{"why", "async-wins", "live", "pitfalls", "decide"},
		Meta:         "Async or live stand-ups? An honest comparison for small teams: what each does best, how async fails, and how to choose your mix.",
		TLDR: []string{
			"Live stand-ups drift into status reports; written ones leave a record and work across time zones.",
			"A short weekly call still does what text cannot, and async updates fade without attention.",
			"Time zones, hand-offs and how much people miss each other decide the right mix.",
		},
		Intro:      "Few small-team rituals are argued about as much as the daily stand-up. This article compares the live and the written, asynchronous versions honestly, including the ways async goes wrong, and ends with a few questions that point your team to the mix that suits it.",
		Conclusion: "Live and async stand-ups are two tools for the same job: knowing who needs help. Most small teams end up with written updates on most days and a short call once a week. Answer the questions above together, try your mix for a month, and adjust it with the team.",
	},
	{
		Option:       "The team lead's guide",
		ArticleTitle: "The Team Lead's Guide to Async Stand-ups",
		Angle:        "As a team lead, your own habits of reading, reacting and unblocking decide whether an async stand-up lives or fades.",
		Audience:     "Team leads and engineering managers who will own the new routine and already use Slack or a similar chat tool every day.",
		Sections:     []string{"why", "timing", "followup", "blockers", "review"},
		Meta:         "A team lead's guide to async stand-ups: a posting window, daily reading, visible blockers and a review after four weeks.",
		TLDR: []string{
			"A live stand-up costs a five-person team more than six hours a week, and most updates serve only a few listeners.",
			"A posting window, daily reading and visible blockers keep an async stand-up useful.",
			"Your reading and replying habits set the norm; review the change together after a month.",
		},
		Intro:      "When a team goes async, the stand-up does not run itself: someone has to set it up, model it and keep it alive. This guide is for that person. It covers why to change, how to time the updates, what to do with them once they arrive, and how to measure whether it works.",
		Conclusion: "An async stand-up lives or dies on a few habits, and most of them start with the lead: post a good example, read every update, react, and answer blockers the same day. Do that for four weeks, then hand the review to the team and let them decide how to continue.",
	},
	{
		Option:       "Set it up in Slack in ten minutes",
		ArticleTitle: "Set Up Async Stand-ups in Slack in Ten Minutes",
		Angle:        "Slack alone is enough for a working async stand-up, and the setup takes ten minutes; the habits take a month.",
		Audience:     "Anyone on a small team who can create Slack channels and wants a working setup today; comfortable with channels and threads.",
		Sections:     []string{"tools", "format", "timing", "followup", "pitfalls"},
		Meta:         "Set up an async stand-up in Slack in ten minutes with a channel, a daily thread and Workflow Builder, then keep it alive.",
		TLDR: []string{
			"A dedicated channel, a daily thread and Slack's own Workflow Builder are all the setup you need.",
			"Three short questions, a posting window and a daily read keep the thread useful.",
			"Watch update length and participation in the first month to catch problems early.",
		},
		Intro:      "You do not need a new app to run an async stand-up: if your team lives in Slack, you already have everything it takes. This guide sets one up in about ten minutes, then covers the habits that keep it useful after the first enthusiastic week.",
		Conclusion: "The setup takes ten minutes; the habit takes a month. Create the channel and the daily thread today, post the first example update yourself, and watch length and participation through the first weeks. If the thread is still busy in week four, the stand-up has found its new home.",
	},
	{
		Option:       "Why async stand-ups fail",
		ArticleTitle: "Why Async Stand-ups Fail, and How Small Teams Can Fix Them",
		Angle:        "Async stand-ups fail in a few predictable ways, and each one has a simple fix.",
		Audience:     "Small teams that tried written stand-ups and watched them fade, and want to know what went wrong before trying again.",
		Sections:     []string{"pitfalls", "blockers", "followup", "live", "review"},
		Meta:         "Why async stand-ups fade, from long updates to silent skippers, and five simple fixes a small team can apply this week.",
		TLDR: []string{
			"Async stand-ups fade when updates grow long and people stop posting or reading.",
			"Visible blockers, daily reactions and one weekly call fix most of the damage.",
			"A review after four weeks turns a fading habit into a deliberate choice.",
		},
		Intro:      "Many small teams try async stand-ups, enjoy a good first week and then watch the thread go quiet. That fade is predictable, and so are its causes. This article walks through the five most common ways written stand-ups fail, with a concrete fix for each.",
		Conclusion: "Async stand-ups rarely fail because the idea is wrong; they fail because a few small habits slip. Keep updates short, make blockers visible, read and react every day, keep one live call, and review after a month. Each fix takes minutes, and together they keep the thread worth reading.",
	},
}

// blogPool is the pool of sections, by key. Their drafts hold a few wordy
// phrases ("in order to", "really") that the editor pass tightens.
var blogPool = map[string]blogSection{
	"why": {
		Title: "Why live stand-ups stop working",
		Brief: "A daily stand-up starts as a quick sync and drifts into a status report read aloud. This section names what that drift costs a small team.",
		Facts: []blogFact{
			{"A 15-minute stand-up for five people uses 75 person-minutes a day, more than six hours a week, before anyone is late or it overruns", "standup-cost"},
			{"Meetings in the middle of the morning split the longest stretch of uninterrupted time that many developers and designers have in a day", "maker-time"},
			{"In small teams, most updates given in a live stand-up are relevant to only one or two of the people listening", "standup-relevance"},
			{"Stand-ups that regularly overrun are usually carrying discussions that belong in a smaller group", "overruns"},
		},
		Lead:     "Most stand-ups begin with a good idea: fifteen minutes to see where everyone is and who needs a hand. Over a few months they tend to drift into a round of status reports, and people mostly sit through the meeting in order to wait for their turn, half-listening to updates that have nothing to do with their own work.",
		Practice: "Before changing anything, watch the next five stand-ups with fresh eyes. Note how long each one really takes, how many updates lead to a question, and how often someone says “let's take that offline”. Those three numbers make the case for change better than any opinion, and they give you a baseline to compare against later.",
		Close:    "None of this means the team should stop talking to each other. It means the daily update does not need a meeting to happen.",
	},
	"async-wins": {
		Title: "What async stand-ups do better",
		Brief: "Written updates give people time to think, leave a searchable record and work across time zones. They also make quieter colleagues as visible as the loud ones.",
		Facts: []blogFact{
			{"Written updates leave a searchable record, so a colleague back from two weeks of leave can catch up in a few minutes", "written-record"},
			{"Teams spread over three or more time zones rarely find a meeting slot that suits everyone, while a written update needs none", "time-zones"},
			{"People who seldom speak first in meetings tend to contribute more evenly when updates are written", "quiet-voices"},
			{"Reading an update takes less time than listening to it, because readers skim the parts that do not concern them", "skim-vs-listen"},
		},
		Lead:     "A written stand-up changes who gets heard and when. Everyone answers in their own time, so an update becomes a considered note rather than whatever comes to mind when it is suddenly your turn to speak, and the whole team can read it at the moment that suits them best.",
		Practice: "To feel the difference, run one week in parallel: keep the live meeting, but ask everyone to post the same update in writing beforehand. At the end of the week, ask the team which version told them more, and which one they would really miss if it disappeared tomorrow.",
		Close:    "The gain is not only the time saved. It is a fairer and calmer way of knowing what everyone is working on, and it leaves a record the team can come back to.",
	},
	"format": {
		Title: "Three questions, written down",
		Brief: "Keep the classic three questions and agree on a short, fixed format. Updates should take a minute to write and less to read.",
		Facts: []blogFact{
			{"An update of three short answers can be read in under a minute, so a five-person team's written stand-up takes about five minutes to read", "update-length"},
			{"A fixed order of questions makes updates easier to scan, because readers know where to look for the blockers", "scanning"},
			{"Linking to the ticket or document instead of describing it keeps updates short and still gives readers the detail they need", "link-dont-describe"},
			{"Updates written in the same place every day are easier to find later than updates spread over direct messages", "one-place"},
		},
		Lead:     "The format that works is the one everybody already knows: what I finished, what I am doing next, and what is in my way. Pin the three questions in the channel so that nobody has to remember them, and ask for a sentence or two per question, not a diary of the whole day.",
		Practice: "Write the first update yourself and post it as the example. Keep it deliberately plain: one line per question, a link where it helps, and nothing about how busy you are. People copy the first example they see, so make it the one you want everyone to follow for the next month.",
		Close:    "Short, predictable updates are the whole trick. If an update needs more than three sentences, it probably deserves a thread of its own.",
	},
	"timing": {
		Title: "A posting window, not a meeting time",
		Brief: "Replace the fixed meeting with a posting window at the start of each person's day. Everyone posts in their own morning and reads when it suits them.",
		Facts: []blogFact{
			{"A posting window tied to each person's local morning works across time zones without anyone joining early or staying late", "posting-window"},
			{"One automated reminder at the start of the window is usually enough, while repeated nudges are quickly ignored", "reminders"},
			{"Teams that also agree on a reading deadline tend to catch blockers the same day instead of the next morning", "reading-deadline"},
			{"Posting at the start of one's own day, rather than at a fixed hour, is the pattern most distributed teams settle on", "own-morning"},
		},
		Lead:     "An async stand-up still needs a rhythm, just not a shared clock. Agree on a window instead of a time: everyone posts within the first two hours of their own working day and reads the other updates before lunch, so that nobody has to join early or stay late in order to be included.",
		Practice: "Write the window down next to the three questions, in plain words: “post by 11:00 your time, read by 13:00”. Set a single reminder for the start of the window, and resist adding a second one for the first two weeks, even if a few updates arrive late at first.",
		Close:    "The window gives the habit a shape without tying anyone to a calendar slot. If it does not fit, move it after the first two weeks.",
	},
	"tools": {
		Title: "Keep it where the team already works",
		Brief: "Run the stand-up in the chat tool the team already has open all day, with one thread per day. A separate app for updates is one more place nobody checks.",
		Facts: []blogFact{
			{"A thread per day keeps the channel readable: one top-level message a day, with everyone's updates folded under it", "slack-threads"},
			{"Slack's built-in Workflow Builder can post a daily message with the three questions, with no extra app to install", "slack-workflows"},
			{"Emoji reactions, such as eyes for seen and a check mark for resolved, let people acknowledge an update without adding noise", "reactions"},
			{"Each extra tool a team has to check every day lowers the chance that any one of them is checked", "tool-sprawl"},
		},
		Lead:     "The best tool for an async stand-up is the one the team already has open all day. In Slack that means a dedicated channel and one thread per day, started by a reminder, where each person replies with their update and questions stay under the update they are about.",
		Practice: "Create the channel, write the three questions into its description, and build one workflow that posts “Today's stand-up: reply in this thread” every working morning. That is the whole setup: no integrations to approve, no new logins, and nothing to maintain when someone joins or leaves the team.",
		Close:    "Keep the setup boring and visible. The less there is to install, the more likely the habit is to survive its first month, and the easier it is to change when the team wants something different.",
	},
	"blockers": {
		Title: "Make blockers impossible to miss",
		Brief: "A blocker buried in the middle of an update is a blocker nobody sees. Give blockers their own marker and someone who answers the same day.",
		Facts: []blogFact{
			{"A consistent prefix for blockers lets both readers and simple search filters find them in seconds", "blocker-prefix"},
			{"Naming who can unblock, with an @-mention, turns a complaint into a request that a person owns", "mentions"},
			{"Blockers answered within the same working day rarely grow into missed deadlines", "same-day"},
			{"Solving the blocker in a thread under the update keeps the fix next to the problem for anyone reading later", "thread-fixes"},
		},
		Lead:     "The main job of any stand-up is to surface what is stuck, and written updates can easily hide it in the middle of a paragraph. Give blockers a visible marker, such as a line that starts with “Blocked:”, so that they really stand out when someone scans the thread in a hurry.",
		Practice: "Agree on two rules and write them under the three questions: a blocker always starts with “Blocked:” and always mentions the person who can help. Whoever is mentioned replies the same day, even if only to say when they will look. A quick reply is often enough to get the work moving again.",
		Close:    "If a blocker needs a real conversation, start a short call. Async is the default, not a rule against talking, and a five-minute call that unblocks a whole day is time well spent.",
	},
	"followup": {
		Title: "Read, react, follow up",
		Brief: "An update nobody reads is a diary. Agree that everyone reads the day's thread and reacts, and that questions go in replies.",
		Facts: []blogFact{
			{"A simple reaction on each update tells the writer it was seen, which keeps people posting", "acknowledge"},
			{"Questions asked as replies under an update keep the context together and spare the rest of the channel", "reply-in-thread"},
			{"A team lead who reads every update and replies to one or two sets the norm faster than any written rule", "lead-by-example"},
			{"Updates that get a reply within a few hours tend to be followed by more detailed updates the next day", "reply-speed"},
		},
		Lead:     "Writing updates is half of an async stand-up; reading them is the other half, and it is the half that quietly disappears first. Make reading part of the agreement: everyone skims the day's thread and leaves at least a reaction on each update, so that every writer knows their note landed.",
		Practice: "Block ten minutes in your own calendar right after the posting window and use them to read. React to every update, ask at most one question per person, and answer any question addressed to you before the end of the day. After a week or two, others will start doing the same without being asked.",
		Close:    "Reading takes a few minutes a day. Skipping it costs the one thing a stand-up exists for: knowing who needs help, and helping them in time.",
	},
	"live": {
		Title: "Keep one live touchpoint a week",
		Brief: "Going async for daily updates does not mean never meeting. A short weekly call keeps the social glue and handles what text cannot.",
		Facts: []blogFact{
			{"Remote teams that keep a regular video call report feeling more connected than teams that work only in writing", "connection"},
			{"A 30-minute weekly call instead of five 15-minute daily ones gives a five-person team back almost four person-hours a week", "weekly-call"},
			{"Calls with an agenda drawn from the week's written updates tend to stay short and focused", "agenda"},
			{"Many remote teams say the informal minutes before and after a call matter as much as its agenda", "small-talk"},
		},
		Lead:     "Written updates carry information well and warmth badly. Keep one short live session a week, thirty minutes at most, for the things text is poor at: a quick laugh, a tricky trade-off, a decision that needs everyone's view, or a new colleague's very first week on the team.",
		Practice: "Put the call at the time with the widest overlap, and build its agenda from the week's thread: two or three open questions, one decision, and five minutes with no agenda at all. Cancel it when there is truly nothing to discuss, but never two weeks in a row.",
		Close:    "The weekly call is where the team feels like a team. The daily thread is where it stays in sync. Together they give a small team most of what the old daily meeting offered, at a fraction of the cost.",
	},
	"pitfalls": {
		Title: "Walls of text and silent skippers",
		Brief: "Async stand-ups usually fade in two ways: updates grow too long to read, and people stop posting. Both are easy to fix when spotted early.",
		Facts: []blogFact{
			{"Updates that grow past a few sentences get skimmed, so the extra detail is often lost anyway", "long-updates"},
			{"Participation tends to drop when people see no reaction to what they post", "participation"},
			{"A friendly private check-in works better than a public reminder when someone stops posting", "check-in"},
			{"Written routines are most fragile in their second and third weeks, once the novelty has worn off", "weeks-two-three"},
		},
		Lead:     "Async stand-ups rarely fail all at once. They fade: updates slowly grow into long reports that nobody finishes reading, and one or two people stop posting until the daily thread is half empty and the rest of the team starts to wonder whether it is really still worth the effort.",
		Practice: "For the first month, glance at two things every Friday: the longest update of the week and the number of people who posted each day. If updates are growing, repost the short example. If someone has gone quiet, send them a private message and ask what would make posting easier. Neither fix needs a new rule, only attention.",
		Close:    "Length and attendance tell you early whether the habit is holding. Both are far easier to fix in week two than in month three, when the thread has gone quiet and the old meeting starts to look attractive again.",
	},
	"review": {
		Title: "Check after a month",
		Brief: "Treat the switch as an experiment with a review date. After four weeks, the team decides what to keep, change or drop.",
		Facts: []blogFact{
			{"A short anonymous poll with three questions, on time saved, blockers caught and feeling connected, is enough for a small team's review", "team-poll"},
			{"Four weeks is long enough for a new routine to settle and short enough that nobody feels stuck with it", "four-weeks"},
			{"Teams that review a new practice together are more likely to keep it than teams that have it imposed on them", "ownership"},
			{"Agreeing on success measures before a trial makes its review shorter and less heated", "success-measures"},
		},
		Lead:     "Treat the switch to async as an experiment, not a policy. Put a review on the calendar four weeks out, and agree up front what would count as success, so that the conversation at the end is about evidence rather than about taste or about whoever argues the loudest.",
		Practice: "Run the review as a normal thirty-minute call. Share the poll results first, then ask each person for one thing to keep and one thing to change. Decide on no more than two changes, write them into the channel description, and set the next review for three months later.",
		Close:    "Whatever the result, the review is a win. The team decides how it works together, and that is the real point of a stand-up. Put the date in the calendar today.",
	},
	"case": {
		Title: "Five people, three time zones",
		Brief: "Meet Fernhill, a fictional five-person design studio whose daily call never suited everyone. Its starting point will feel familiar to many small teams.",
		Facts: []blogFact{
			{"Across Lisbon, Berlin and Toronto, ordinary nine-to-five working hours overlap for only about two hours a day", "time-zone-overlap"},
			{"Small teams spread over several time zones often spend their scarce overlap on status updates rather than on discussion", "overlap-use"},
			{"Teams new to async work usually start with the stand-up, because it is the easiest meeting to replace in writing", "first-meeting"},
			{"A daily call at the edge of someone's working day is the one most often skipped or attended half-distracted", "edge-of-day"},
		},
		Lead:     "Fernhill is a fictional five-person design studio with people in Lisbon, Berlin and Toronto, and it stands in here for many small teams. The only slot that suited all three cities was late afternoon in Europe and early morning in Canada, so the daily call was always somebody's worst hour of the day.",
		Practice: "Fernhill's first step was modest: a two-line proposal in the team channel to try written updates for one month, with the call kept as a fallback. Nobody had to agree to async forever, only to a four-week experiment with a date on which to look back on it together.",
		Close:    "So Fernhill decided to try a month of written stand-ups, and to keep its two hours of overlap for real conversations. The rest of this article follows what happened next.",
	},
	"decide": {
		Title: "How to choose for your team",
		Brief: "Neither format wins everywhere. A few questions about time zones, hand-offs and how much people miss each other point to the right mix.",
		Facts: []blogFact{
			{"Teams in one office with frequent hand-offs often keep a short live stand-up and lose little by doing so", "co-located"},
			{"Teams across several time zones usually gain the most from written updates, because any meeting time is a compromise", "distributed"},
			{"Many teams settle on a hybrid: written updates on most days and one live call a week", "hybrid"},
			{"Teams with many hand-offs between people benefit most from a daily check of some kind, written or spoken", "hand-offs"},
		},
		Lead:     "There is no universal answer, but a few questions get a small team most of the way. How many time zones do you span, how often does work get stuck waiting on someone else, and how much do people miss simply seeing each other during an ordinary working week?",
		Practice: "Answer the three questions together as a team, not alone as the lead. If the answers point in different directions, start with the hybrid: written updates four days a week and a short call on the fifth. It is the easiest mix to adjust later, in either direction.",
		Close:    "Pick the mix that fits your answers, try it for a month, and let the team's own experience have the final word. Whatever you choose, write it down where everyone can see it, so that the choice stays deliberate.",
	},
}

// blogGenericFacts are the research notes of a section the pool does not know (a
// heading the team wrote): three of them, chosen by the heading.
var blogGenericFacts = []blogFact{
	{"Small teams adopt a new routine more easily when it replaces an existing meeting rather than adding to the calendar", "routines"},
	{"Written team agreements, pinned where everyone works, are followed more consistently than ones agreed only in conversation", "team-agreements"},
	{"A trial period with a fixed end date lowers resistance to trying a new way of working", "trial-periods"},
	{"Short written updates are read more often and more completely than long ones", "short-updates"},
	{"People keep up a shared habit longer when they can see others doing it too", "visible-habits"},
	{"Asynchronous work depends on clear ownership: every question needs someone who is expected to answer it", "async-ownership"},
}

// blogPads lengthen a draft that would be shorter than the sections' minimum.
var blogPads = []string{
	"A small team can try this for two weeks and keep only what helps.",
	"The point is not a perfect process but a habit the whole team can live with.",
	"None of it needs new software, only a shared agreement and a little patience.",
	"Write the agreement down where everyone works, so that new colleagues find it too.",
}

// blogEdits are the editor pass's changes: filler and hedges out, shorter phrases in.
var blogEdits = []string{
	"The evidence is actually quite consistent here. ", "The evidence is consistent. ",
	"On top of that, ", "Also, ",
	" in order to ", " to ",
	" really ", " ",
	" very ", " ",
	" simply ", " ",
	" quite ", " ",
	" actually ", " ",
	" basically ", " ",
}

// articlePads are neutral practical paragraphs that lengthen a section of the article
// (or a draft) towards its share of the target length; they suit any topic.
var articlePads = []string{
	"Before moving on, write down one change you will try this week, who it affects and how you will know it worked. A small, named experiment teaches more than a long plan, and it gives you something concrete to look back on.",
	"Keep the first version deliberately small. It is easier to add a step that people ask for than to remove one they have learned to ignore, and a light start leaves room for the team to shape what comes next.",
	"Share what you are trying with the people it touches before you start, not after. A two-line note that says what changes, for how long and why is usually enough to turn doubts into useful questions.",
	"Expect the first week to feel awkward. New habits take a few repetitions before they stop feeling like extra work, so judge the idea on the third week rather than on the first day.",
	"Make the agreement visible where the work happens: a pinned message, a line in the team's handbook or a short checklist. People follow what they can see far more reliably than what they once heard in a meeting.",
	"Name one person who keeps an eye on the change for the first month. They do not have to enforce anything; they notice when it slips, ask why, and bring what they learn to the next review.",
	"Collect a few concrete examples as you go: a question that was answered faster, a problem caught early, a task that stalled anyway. Specific stories make the later review far more useful than general impressions.",
	"Leave room for exceptions. A rule that bends for a launch week or a holiday is kept; a rule that never bends is quietly abandoned the first time it gets in the way.",
	"Ask the quieter members of the team what they think, in private if that helps. They often notice the friction first, and their suggestions tend to be practical rather than loud.",
	"Resist adding tools too early. Most of the value comes from a clear agreement about who does what and when; software can make that easier later, once the team knows what it actually needs.",
	"Write down what you expect to happen before you start. Comparing the result with that short prediction shows what you learned, and keeps the discussion about evidence rather than taste.",
	"Revisit the change after a month and decide openly whether to keep, adjust or drop it. Ending an experiment that did not work is a good outcome, not a failure, because the team learned something real.",
	"Pair the change with one thing you stop doing. Time and attention are limited, and a new habit sticks far better when it replaces an old one instead of piling on top of it.",
	"Explain the reason behind each step, not only the step itself. People adapt a practice sensibly when they know what it is for, and follow it mechanically, or not at all, when they do not.",
	"Celebrate the first small win in public. A short message that says what worked and who made it happen encourages others to try, and shows that the effort is noticed.",
}
