package demo

// The canned content of the built-in workflows. Two fictional projects, one per
// workflow, so that every artifact agrees with the others whichever option a person
// picks (the blog workflow's topic is in blog_content.go):
//
//   - product-brief: a weekly meal-planning app for busy parents (named only by the
//     last artifact);
//   - proposal: the Millbrook Community Solar Pilot, a 24-month, EUR 315,650 grant
//     for a shared rooftop array whose credits go to about 120 low-income tenant
//     households.
//
// Texts may hold placeholders, {artifact_id}, replaced by the Phrase of the option
// chosen for that artifact when its approved text is in the prompt (or by the
// theme's default): "For {audience} who {problem}, …".

// option is one canned option of a choice artifact.
type option struct {
	// Title names the option (at most 60 characters, shown on a button).
	Title string
	// Text is the option as proposed: a short paragraph.
	Text string
	// Points are the bullet points that the written artifact adds to Text.
	Points []string
	// Phrase is how later artifacts refer to this choice ({artifact_id}).
	Phrase string
}

// artifactContent is the canned content of one artifact.
type artifactContent struct {
	// Options is the pool of a choice artifact, proposed in order; a regeneration
	// proposes the ones not shown last time.
	Options []option
	// Close is appended to a written choice artifact, after its points.
	Close string
	// Text is the written text of a draft or auto artifact.
	Text string
	// More is added when people ask for a longer or more detailed text.
	More string
}

// theme is the canned content of one built-in workflow, recognised by its title.
type theme struct {
	// Artifacts maps an artifact id to its content.
	Artifacts map[string]artifactContent
	// Defaults are the placeholders' values before the artifact is approved.
	Defaults map[string]string
	// Summary is the report's summary (commit_final_docset), with placeholders.
	Summary string
}

var productBrief = theme{
	Defaults: map[string]string{
		"problem":           "face the nightly “what's for dinner?” scramble",
		"audience":          "busy parents of young children",
		"value_proposition": "plans a week of family dinners in ten minutes",
		"positioning":       "recipe apps",
		"name":              "the app",
	},
	Summary: "This brief defines {name}, a weekly meal-planning app for {audience} who {problem}. " +
		"Its promise is that it {value_proposition}, and it is positioned against {positioning}. " +
		"The attached document sets out the problem, audience, value proposition, positioning and the name checks still to do.",
	Artifacts: map[string]artifactContent{
		"problem": {Options: []option{
			{
				Title:  "The 5 pm dinner scramble",
				Text:   "Working parents reach 5 pm with hungry children, no plan and a half-empty fridge. Deciding what to cook, checking what is in the house and improvising takes 30–45 minutes of stress at the busiest moment of the day, and often ends in a takeaway nobody planned to pay for.",
				Phrase: "face a 5 pm dinner scramble with no plan",
				Points: []string{
					"**Situation:** a weekday evening, parents just home from work, children hungry and tired.",
					"**The struggle:** deciding what to cook and checking what is at home, from scratch, every single day.",
					"**Cost today:** 30–45 minutes of stress each evening and two or three unplanned takeaways a week, roughly 40–60 EUR (estimate, to verify in interviews).",
				},
			},
			{
				Title:  "Food bought, food binned",
				Text:   "Parents shop with good intentions and throw a good share of it away: vegetables bought for meals that never happened, a second jar of what was already at the back of the fridge. They feel guilty about the waste and the money, but the week never goes as planned.",
				Phrase: "buy food that ends up in the bin",
				Points: []string{
					"**Situation:** the big weekend shop, then a week in which plans change: a late meeting, a birthday party, a child who suddenly refuses peppers.",
					"**The struggle:** remembering what is at home and matching it to meals that still fit the week.",
					"**Cost today:** an estimated 15–25 % of the food bought is thrown away, on the order of 50 EUR a month for a family of four (to verify).",
				},
			},
			{
				Title:  "Stuck in the same-six-meals rut",
				Text:   "Parents cook the same six meals on repeat because they are safe: the children eat them and nobody has to think. They want more variety and better nutrition for their kids, but finding, vetting and shopping for new recipes feels like a project they never have time for.",
				Phrase: "are stuck cooking the same few meals on repeat",
				Points: []string{
					"**Situation:** Sunday evening, planning next week's meals, too tired to look for anything new.",
					"**The struggle:** finding recipes the whole family will eat that fit a weeknight's time budget.",
					"**Cost today:** boredom at the table, worry about nutrition, and an hour or more of browsing for every new meal that gets tried.",
				},
			},
			{
				Title:  "One parent carries the mental load",
				Text:   "In many families one parent carries the whole job of feeding everyone: what is in the fridge, who eats what, what needs buying and when. The other parent helps when told. The planner feels alone with a task that never ends, and everything falls apart when they are away.",
				Phrase: "carry the whole mental load of feeding the family",
				Points: []string{
					"**Situation:** the usual planner is travelling, and the other parent texts “what do I make?” from the supermarket.",
					"**The struggle:** keeping meals, tastes and shopping in one person's head.",
					"**Cost today:** friction between partners, several hours of invisible work a week, and evenings that fall apart when the planner is away.",
				},
			},
			{
				Title:  "Allergies make every meal a risk",
				Text:   "Parents of a child with a food allergy check every label and every recipe, and cannot simply cook what friends recommend. Each new meal means research, and a mistake means a reaction. So they stick to a short list and feel cut off from easy family food.",
				Phrase: "cook around a child's food allergy every day",
				Points: []string{
					"**Situation:** trying a new recipe on a weeknight and checking every ingredient against the allergy list.",
					"**The struggle:** finding meals that are safe, that the whole family enjoys, and that can be bought in one shop.",
					"**Cost today:** 20–30 minutes of checking per new meal, constant worry, and a narrow diet for the whole family (estimate, to verify).",
				},
			},
			{
				Title:  "The 7 am lunchbox rush",
				Text:   "School lunches, snacks and breakfasts are the meals nobody plans. Parents pack them at 7 am with whatever is left, buy expensive single-portion snacks to fill the gaps, and worry about what their children actually eat during the day.",
				Phrase: "pack lunches and snacks in a rush every morning",
				Points: []string{
					"**Situation:** a school morning, ten minutes before leaving, an empty lunchbox and an empty bread bag.",
					"**The struggle:** having the right food at home for five lunches a week without planning them.",
					"**Cost today:** stressful mornings and around 20–30 EUR a month of convenience snacks (estimate, to verify).",
				},
			},
		}},

		"audience": {Options: []option{
			{
				Title:  "Dual-income parents of under-10s",
				Text:   "Couples who both work full time, with one to three children under ten, in a city or its suburbs. Their evenings are the tightest part of the day and they already pay to save time (delivery, cleaners). We reach them through school parent groups and parenting newsletters.",
				Phrase: "dual-income parents of children under ten",
				Points: []string{
					"**Who:** couples who both work full time, one to three children aged 2–10, urban or suburban.",
					"**Why they feel it most:** both parents get home late, so the dinner decision lands at the worst moment, every weekday.",
					"**Where to find twenty this month:** school and nursery parent chat groups, local parenting newsletters, our own colleagues.",
					"**Not for now:** parents of teenagers, families with a stay-at-home parent, and keen cooks who enjoy planning.",
				},
			},
			{
				Title:  "Single parents working full time",
				Text:   "Single parents with a full-time job and at least one child at primary school. Every meal decision is theirs alone, there is nobody to hand over to, and the budget is tight. They gather in single-parent associations and online forums where advice is shared generously.",
				Phrase: "single parents who work full time",
				Points: []string{
					"**Who:** single parents in full-time work with at least one child aged 5–11.",
					"**Why they feel it most:** nobody to share the planning with, and little slack in the budget for takeaways.",
					"**Where to find twenty this month:** single-parent associations, online parenting forums, employers' parent networks.",
					"**Not for now:** two-parent households and families with only teenagers.",
				},
			},
			{
				Title:  "Parents of children with allergies",
				Text:   "Parents of a child aged 1–12 with one or more diagnosed food allergies. They plan more carefully than anyone, trust tools that respect restrictions, and are organised in active patient groups and allergy clinics: a small segment, but one that talks.",
				Phrase: "parents of children with food allergies",
				Points: []string{
					"**Who:** parents of a child aged 1–12 with a diagnosed food allergy.",
					"**Why they feel it most:** every new meal needs checking, so planning takes them far longer than other parents.",
					"**Where to find twenty this month:** allergy patient associations, paediatric allergy clinics, their online support groups.",
					"**Not for now:** families with lifestyle diets (vegan, keto) but no medical restriction.",
				},
			},
			{
				Title:  "Shift-working parents",
				Text:   "Nurses, retail and logistics workers with children, whose schedule changes from week to week. A fixed weekly plan breaks for them by Wednesday; they need meals that fit an irregular rota. Hospitals and unions give us a concentrated way to reach them.",
				Phrase: "parents who work shifts",
				Points: []string{
					"**Who:** parents with children under 12 who work rotating shifts in healthcare, retail or logistics.",
					"**Why they feel it most:** their week changes every week, so ordinary planning habits never stick.",
					"**Where to find twenty this month:** hospital staff groups, union newsletters, the team's contacts at a local hospital.",
					"**Not for now:** parents with regular office hours.",
				},
			},
			{
				Title:  "New parents back at work",
				Text:   "Parents in their first year back at work after parental leave, with a baby or toddler starting childcare. Routines are being rebuilt from scratch and solid food is new. Childcare centres and return-to-work programmes reach them at exactly that moment.",
				Phrase: "parents returning to work after parental leave",
				Points: []string{
					"**Who:** parents in their first year back at work, with a child aged 6 months to 3 years.",
					"**Why they feel it most:** every routine is new, and they are cooking for a small child for the first time.",
					"**Where to find twenty this month:** childcare centres, employers' return-to-work programmes, antenatal class alumni groups.",
					"**Not for now:** parents of school-age children.",
				},
			},
			{
				Title:  "Large families with 3+ children",
				Text:   "Families with three or more children, where quantities, tastes and budgets multiply. One dinner has to please five people and feed them for under 15 EUR. Large-family associations and school communities make them easy to find.",
				Phrase: "parents of three or more children",
				Points: []string{
					"**Who:** households with three or more children living at home.",
					"**Why they feel it most:** every planning mistake is multiplied by five plates and a tighter budget.",
					"**Where to find twenty this month:** large-family associations, school communities, local parenting groups.",
					"**Not for now:** families with one child.",
				},
			},
		}},

		"value_proposition": {Options: []option{
			{
				Title:  "A week of dinners in ten minutes",
				Text:   "Plan a whole week of family dinners in ten minutes on Sunday, and never face the 5 pm question again.",
				Phrase: "plans a week of family dinners in ten minutes",
				Points: []string{
					"Today parents improvise every evening or plan on paper, which takes an hour and falls apart by Wednesday.",
					"The plan starts from the meals the family already eats, with one new idea a week.",
					"When the week changes, a night is swapped in one tap and the shopping list follows.",
				},
			},
			{
				Title:  "Spend less, waste less",
				Text:   "Cut the family food bill by buying only what the week's meals need, and throw away less.",
				Phrase: "cuts the family food bill and the food thrown away",
				Points: []string{
					"Today's alternative, a big shop on instinct plus takeaways on bad days, costs an estimated 50–100 EUR a month more (to verify).",
					"The shopping list is built from the week's meals and skips what is already at home.",
					"Leftovers are planned into the next day instead of the bin.",
				},
			},
			{
				Title:  "Calm evenings, decided in advance",
				Text:   "Come home knowing what's for dinner, with everything in the fridge, so evenings are for the family instead of for deciding.",
				Phrase: "makes weekday evenings calm again",
				Points: []string{
					"Today the decision is made at 5 pm, tired, by whoever is nearest the fridge.",
					"Tonight's dinner and its ingredients are settled days before.",
					"Both parents see the same plan, so either can start cooking.",
				},
			},
			{
				Title:  "Children eat better, without the fight",
				Text:   "Get children eating a more varied, balanced diet with meals they actually accept, without nightly negotiations.",
				Phrase: "gets children eating a varied diet without the nightly fight",
				Points: []string{
					"Today parents either stick to safe favourites or battle over new dishes; neither lasts.",
					"New dishes are introduced one at a time, next to meals the children already like.",
					"Parents see at a glance how varied the week is.",
				},
			},
			{
				Title:  "Share the load, not just the chores",
				Text:   "Share the job of feeding the family, so whoever is home can cook without asking the other.",
				Phrase: "lets both parents share the job of feeding the family",
				Points: []string{
					"Today the plan lives in one parent's head and fails the day they are away.",
					"The week's plan, recipes and list are shared between both parents.",
					"Whoever shops or cooks can see what is needed without a phone call.",
				},
			},
			{
				Title:  "Safe meals, no label-checking",
				Text:   "Cook new family meals with confidence that every ingredient is safe for an allergic child.",
				Phrase: "keeps every family meal safe for an allergic child",
				Points: []string{
					"Today parents check every recipe and label by hand, or never try anything new.",
					"Every suggested meal is filtered by the family's allergy list before it is shown.",
					"Swaps for common allergens are suggested with each recipe.",
				},
			},
		}},

		"positioning": {Options: []option{
			{
				Title:  "A family planner, not a recipe app",
				Text:   "For {audience} who {problem}, [product] is a family meal planner that {value_proposition}. Unlike recipe apps, it starts from the meals the family already eats and plans the week around the family's calendar.",
				Phrase: "recipe apps",
				Points: []string{
					"**Category:** family meal planner, a category parents already know from paper planners and fridge calendars.",
					"**Compared with:** recipe apps and sites, which offer inspiration but leave planning and shopping to the parent.",
					"**What sets it apart:** it plans around the family's real week and favourite meals, which a recipe catalogue cannot know.",
				},
			},
			{
				Title:  "The shopping list that plans itself",
				Text:   "For {audience} who {problem}, [product] is a shopping-list app that {value_proposition}. Unlike a notes app or a shared list, it builds the list from the week's meals and what is already at home.",
				Phrase: "shared shopping lists",
				Points: []string{
					"**Category:** shopping-list app, something every parent already has on their phone.",
					"**Compared with:** notes apps and shared lists, which only hold what someone remembered to type.",
					"**What sets it apart:** the list is derived from the plan, so nothing is forgotten and nothing is bought twice.",
				},
			},
			{
				Title:  "Meal kits without the box",
				Text:   "For {audience} who {problem}, [product] is a meal-kit alternative that {value_proposition}. Unlike meal-kit subscriptions, it works with the family's own supermarket and budget: no boxes, no fixed menu, no price per portion.",
				Phrase: "meal-kit subscriptions",
				Points: []string{
					"**Category:** meal kits, known to the audience from advertising and trial offers.",
					"**Compared with:** meal-kit subscriptions, which decide for you but cost two to three times the supermarket price (estimate, to verify).",
					"**What sets it apart:** the convenience of a plan at the family's own supermarket prices; a box company cannot claim that.",
				},
			},
			{
				Title:  "The family organiser for food",
				Text:   "For {audience} who {problem}, [product] is a family organiser for meals that {value_proposition}. Unlike general family calendars, it knows who eats what and turns the week's schedule into dinners and a shopping list.",
				Phrase: "family calendar apps",
				Points: []string{
					"**Category:** family organiser, a category parents already use for school runs and activities.",
					"**Compared with:** family calendar apps, which know when everyone is home but nothing about food.",
					"**What sets it apart:** it turns the calendar into a food plan; a calendar app has no idea what anyone eats.",
				},
			},
			{
				Title:  "A nutrition coach for families",
				Text:   "For {audience} who {problem}, [product] is a family nutrition coach that {value_proposition}. Unlike diet apps made for adults counting calories, it plans balanced meals that children will actually eat.",
				Phrase: "adult diet apps",
				Points: []string{
					"**Category:** nutrition coaching app, familiar from fitness and diet apps.",
					"**Compared with:** diet and calorie apps, built for one adult's goals rather than a family's table.",
					"**What sets it apart:** it plans for children's tastes and the whole family at once.",
				},
			},
			{
				Title:  "Batch cooking made simple",
				Text:   "For {audience} who {problem}, [product] is a batch-cooking planner that {value_proposition}. Unlike batch-cooking blogs and books, it fits the sessions to the family's own week and freezer.",
				Phrase: "batch-cooking blogs",
				Points: []string{
					"**Category:** batch cooking, a habit many parents have tried from blogs and social media.",
					"**Compared with:** blogs and books with fixed menus for an imaginary family.",
					"**What sets it apart:** the sessions and portions are planned for this family's week.",
				},
			},
		}},

		"name": {
			Close: "**Checks still to do:** a trademark search in our first markets, the .com and .app domains, the app-store names, and the name's meaning and slang in the main languages of those markets. None of them has been done yet.",
			Options: []option{
				{Title: "Forkcast", Phrase: "Forkcast",
					Text:   "Forkcast: “fork” and “forecast”, a weekly forecast for the family's dinners. Evocative and a little playful.",
					Points: []string{"**Origin:** a blend of “fork” and “forecast”.", "**Why it fits:** a planner that looks ahead at the week's meals, said with a smile."}},
				{Title: "Weekplate", Phrase: "Weekplate",
					Text:   "Weekplate: the week on a plate. Descriptive and plain; it says what the app does.",
					Points: []string{"**Origin:** “week” and “plate”, the week's dinners at a glance.", "**Why it fits:** the category in one word, calm in tone, easy to spell."}},
				{Title: "Sundish", Phrase: "Sundish",
					Text:   "Sundish: “Sunday” and “dish”, for the ten minutes on Sunday that settle the week. Invented, warm.",
					Points: []string{"**Origin:** “Sunday” and “dish”.", "**Why it fits:** the ritual of planning on Sunday, named as a small pleasure."}},
				{Title: "Tuesday", Phrase: "Tuesday",
					Text:   "Tuesday: named after the evening that usually goes wrong. Evocative, memorable, a real word used in a new way.",
					Points: []string{"**Origin:** the mid-week evening when plans run out.", "**Why it fits:** it names the problem the app solves, with some humour."}},
				{Title: "Pantri", Phrase: "Pantri",
					Text:   "Pantri: an invented spelling of “pantry”. Short, friendly, ownable.",
					Points: []string{"**Origin:** “pantry”, with the last letter changed so it can be owned.", "**Why it fits:** homely and practical, like the category."}},
				{Title: "Nomly", Phrase: "Nomly",
					Text:   "Nomly: from “nom nom”, the sound of a happy eater. Invented and playful; children will like saying it.",
					Points: []string{"**Origin:** the children's “nom nom”.", "**Why it fits:** playful, short, and about eating rather than planning."}},
				{Title: "Kitchen Compass", Phrase: "Kitchen Compass",
					Text:   "Kitchen Compass: the thing that tells you which way dinner goes. Descriptive and reassuring.",
					Points: []string{"**Origin:** a compass for the kitchen.", "**Why it fits:** guidance and calm, the promise of the positioning."}},
				{Title: "Mise", Phrase: "Mise",
					Text:   "Mise: from “mise en place”, a cook's word for having everything ready. Evocative, short, a little refined.",
					Points: []string{"**Origin:** the French kitchen term “mise en place”.", "**Why it fits:** everything ready before cooking starts, which is the whole idea."}},
				{Title: "Plan & Plate", Phrase: "Plan & Plate",
					Text:   "Plan & Plate: says both halves of the job. Descriptive, alliterative, clear to anyone.",
					Points: []string{"**Origin:** the two steps, planning and eating.", "**Why it fits:** states the category plainly."}},
				{Title: "Crumb", Phrase: "Crumb",
					Text:   "Crumb: a small, warm, kitchen word for a small, warm app. Evocative, one syllable.",
					Points: []string{"**Origin:** what is left on the table after a family dinner.", "**Why it fits:** homely and modest, easy to remember."}},
			},
		},
	},
}

var grantProposal = theme{
	Defaults: map[string]string{
		"solution":          "a community-owned shared rooftop solar array",
		"problem_statement": "low-income tenants locked out of cheap solar energy",
	},
	Summary: "This proposal asks for EUR 315,650 over 24 months to deliver {solution} in Millbrook, addressing {problem_statement}. " +
		"About 120 low-income tenant households would pay at least 20 % less for their electricity, working with the Millbrook Housing Association, the Eastside Community Centre and a local energy cooperative. " +
		"The attached document sets out the methodology, timeline, budget and the research behind them.",
	Artifacts: map[string]artifactContent{
		"research": {
			Text: `**Context**
- Energy costs take a large share of low-income households' budgets; in Millbrook an estimated one household in five is in energy poverty (to verify with the municipality's latest social report).
- Most affected households rent, so they cannot install rooftop solar themselves.

**Who is affected**
- About 1,200 low-income households in the Eastside and Riverside districts (order of magnitude, to verify).
- Tenants of the Millbrook Housing Association's blocks are the largest concentrated group (to verify).

**Prior approaches and what they left unsolved**
- National rooftop-solar subsidies: they reach homeowners who can pay their share upfront, not tenants.
- The municipality's energy-advice visits (2021–2023, to verify): consumption fell a little, but the price of energy did not.
- Bill-support payments: they relieve one winter and change nothing after it.

**What the funder cares about** (to verify against the call text)
- Community ownership of renewable energy.
- Measurable reductions in energy poverty.
- Models other towns can replicate.

**Open questions before submitting**
- Which roofs are structurally suitable, and who owns them?
- Will the grid operator allow the output to be shared between households?
- Which organisation can legally own and operate the array?
- What co-funding does the call require, and who provides it?`,
			More: "**Sources to collect:** the municipality's social report, the Housing Association's stock list, and the call text with its priorities.",
		},

		"solution": {Options: []option{
			{
				Title:  "Community-owned shared rooftop array",
				Text:   "Install a 150 kWp solar array on the roofs of the Eastside Community Centre and two Housing Association blocks, owned by a local energy cooperative. Its output is shared as bill credits among about 120 low-income tenant households, who pay nothing upfront and become co-op members. Main risk: the grid operator's approval of shared metering.",
				Phrase: "a community-owned shared rooftop array",
				Points: []string{
					"**Gap it closes:** tenants cannot install solar themselves, and subsidies reach only homeowners.",
					"**How it differs:** unlike subsidies and advice visits, it lowers the price tenants pay for energy, at no upfront cost to them.",
					"**Delivery:** 24 months, by the Housing Association, the cooperative and an installer chosen by tender.",
					"**Main risk:** shared metering is not approved in time; fallback: each building uses its own output.",
				},
			},
			{
				Title:  "Solar and batteries for tenant blocks",
				Text:   "Equip four Housing Association blocks with rooftop solar and a shared battery each, supplying the blocks' own consumption first. Savings reach tenants as a lower service charge. Simpler to meter than sharing across town, but it serves fewer households (about 80). Main risk: battery costs eating the savings.",
				Phrase: "rooftop solar with shared batteries on tenant blocks",
				Points: []string{
					"**Gap it closes:** tenants get solar energy without owning a roof or a meter of their own.",
					"**How it differs:** unlike subsidies, it is installed and run by the landlord for the tenants.",
					"**Delivery:** 24 months, by the Housing Association and an installer chosen by tender.",
					"**Main risk:** battery prices; mitigation: size the batteries after six months of metering data.",
				},
			},
			{
				Title:  "Solar subscriptions with the municipality",
				Text:   "The municipality builds a ground-mounted array on its own land and offers low-income households a subsidised subscription: a fixed monthly share of the output, credited on their bills. No roof negotiations, and it can grow to 300 households. Main risk: the municipality's procurement timeline.",
				Phrase: "municipal solar subscriptions for low-income households",
				Points: []string{
					"**Gap it closes:** any household can join, whatever its roof or landlord.",
					"**How it differs:** unlike one-off bill support, the saving lasts for the array's lifetime.",
					"**Delivery:** 30 months, led by the municipality with the Housing Association recruiting households.",
					"**Main risk:** public procurement delays; mitigation: start the tender in month 1.",
				},
			},
			{
				Title:  "Energy-poverty study and pilot design",
				Text:   "A 12-month participatory study with 200 households that measures energy poverty in detail, tests three small interventions (solar shares, efficiency kits, tariff switching) and produces an investment-ready design for a larger project. Lower delivery risk; the impact comes later. Main risk: a funder that wants results within the grant.",
				Phrase: "a participatory energy-poverty study and pilot design",
				Points: []string{
					"**Gap it closes:** nobody knows which intervention works best for Millbrook's tenants.",
					"**How it differs:** unlike the earlier advice visits, it compares interventions with measured results.",
					"**Delivery:** 12 months, by the municipality with an independent evaluator.",
					"**Main risk:** little direct impact within the grant; mitigation: a funded follow-up plan.",
				},
			},
			{
				Title:  "Solar skills and jobs for residents",
				Text:   "Train 20 unemployed Eastside residents as solar installers, who then install panels on community buildings under supervision. The savings go to the buildings' users and the trainees leave with a qualification. Main risk: finding a certified training partner in time.",
				Phrase: "resident training and community solar installation",
				Points: []string{
					"**Gap it closes:** the district has neither the panels nor the people to install them.",
					"**How it differs:** unlike subsidies, it leaves skills and jobs in the district.",
					"**Delivery:** 24 months, with a training college [partner to confirm].",
					"**Main risk:** no certified trainer; mitigation: contact two colleges before submitting.",
				},
			},
			{
				Title:  "Retrofit-and-solar bundle per block",
				Text:   "Combine insulation and a rooftop array in one retrofit of two Housing Association blocks, so homes need less energy and get part of it free. Deepest savings per household, fewest households (about 60). Main risk: construction costs above estimate.",
				Phrase: "a combined insulation and solar retrofit",
				Points: []string{
					"**Gap it closes:** homes that leak heat waste any cheap energy they get.",
					"**How it differs:** unlike single measures, it cuts both consumption and price.",
					"**Delivery:** 30 months, by the Housing Association and a general contractor.",
					"**Main risk:** cost overruns; mitigation: fixed-price contract and a 10 % contingency.",
				},
			},
		}},

		"connections": {
			Text: `The project brings together the organisations that already work with the households it serves, to deliver {solution}.

- **Millbrook Housing Association:** owns the roofs of the two blocks, recruits tenant households through its tenant officers, and signs the roof-use agreements.
- **Eastside Community Centre:** hosts part of the array and the enrolment sessions.
- **Local energy cooperative [partner to confirm]:** owns and operates the array and allocates the bill credits.
- **Municipality of Millbrook:** shares its energy-poverty data and provides co-funding [amount to confirm].
- **Grid operator [to confirm]:** approves the metering arrangement.

**Fit with the funder's priorities**
- *Community ownership of renewable energy:* the cooperative owns the array and tenants become members.
- *Measurable reductions in energy poverty:* every household's bill saving is tracked monthly.
- *Models other towns can replicate:* the legal and metering model is published as a toolkit.

It builds on the municipality's energy-advice visits (2021–2023, to verify), whose household contacts will speed up enrolment.`,
			More: "**Letters of support** will be requested from the Housing Association and the municipality before submission.",
		},

		"problem_statement": {Options: []option{
			{
				Title:  "Tenants locked out of cheap energy",
				Text:   "About 1,200 low-income households in Millbrook's Eastside and Riverside districts (to verify) spend a disproportionate share of their income on energy. Most of them rent, so they are locked out of rooftop solar, today the cheapest electricity there is.",
				Phrase: "low-income tenants locked out of cheap solar energy",
				Points: []string{
					"**Who and how many:** about 1,200 low-income households, most of them Housing Association tenants (research, to verify).",
					"**What:** they pay full retail prices for every kWh, while homeowners nearby produce their own for a fraction.",
					"**Why now:** energy prices have stayed high since 2022 while bill-support payments are ending (to verify), and the blocks' roofs are due for renovation, a window that will not reopen for twenty years.",
					"**Why earlier efforts fall short:** subsidies reach homeowners only, and advice visits cannot lower the price of energy.",
				},
			},
			{
				Title:  "The yearly cost of energy poverty",
				Text:   "Energy poverty costs Millbrook's low-income households an estimated 300–500 EUR a year in extra energy spending (to verify), money taken from food, clothing and school costs. The municipality pays too, in bill support and in the health effects of cold homes.",
				Phrase: "the yearly cost of energy poverty in Millbrook",
				Points: []string{
					"**Who and how many:** about 1,200 low-income households, one in five in the town (research, to verify).",
					"**What:** 300–500 EUR a year of extra energy costs per household (estimate, to verify).",
					"**Why now:** bill-support payments are ending (to verify), so the cost lands on households this winter.",
					"**Why earlier efforts fall short:** support payments relieve one winter; nothing lowers the cost after it.",
				},
			},
			{
				Title:  "Roofs that could pay, but don't",
				Text:   "Millbrook's public and social-housing roofs could produce a large share of what their users consume (to verify with a roof survey), yet almost none of them carries a single panel. Every year they stay bare, the town's poorest households keep paying the highest energy prices.",
				Phrase: "the unused solar potential of Millbrook's public roofs",
				Points: []string{
					"**Who and how many:** the roughly 1,200 low-income households living under or next to those roofs (research, to verify).",
					"**What:** suitable roof space that produces nothing, while its users pay retail prices.",
					"**Why now:** panel prices are low and several roofs are due for renovation, the cheapest moment to add solar.",
					"**Why earlier efforts fall short:** subsidies are designed for private homeowners, not shared buildings.",
				},
			},
			{
				Title:  "Cold homes, poorer health",
				Text:   "Households in energy poverty heat their homes less, and cold, damp homes make children and older people ill more often (well established; local figures to verify). In Millbrook about 1,200 households are at risk (to verify).",
				Phrase: "the health cost of cold homes",
				Points: []string{
					"**Who and how many:** about 1,200 households, with children and older people most exposed (research, to verify).",
					"**What:** under-heated homes and the illnesses that follow.",
					"**Why now:** each winter of high prices adds to the harm.",
					"**Why earlier efforts fall short:** advice visits and payments do not change what heating costs.",
				},
			},
			{
				Title:  "Support that does not last",
				Text:   "For three winters Millbrook's low-income households have been kept afloat by bill-support payments and advice visits (to verify). When the support ends, about 1,200 households (to verify) return to energy costs they cannot afford.",
				Phrase: "energy support that ends before the problem does",
				Points: []string{
					"**Who and how many:** about 1,200 households that received support (research, to verify).",
					"**What:** temporary relief, with the underlying cost unchanged.",
					"**Why now:** the support programmes end this year (to verify).",
					"**Why earlier efforts fall short:** they pay bills instead of lowering them.",
				},
			},
			{
				Title:  "Subsidies that skip renters",
				Text:   "Every solar subsidy available in Millbrook assumes a homeowner with a roof and savings. The 1,200 low-income households in the Eastside and Riverside districts (to verify) are mostly tenants with neither, so public money for clean energy passes them by.",
				Phrase: "solar subsidies that skip renters",
				Points: []string{
					"**Who and how many:** about 1,200 households, most of them tenants (research, to verify).",
					"**What:** no access to the subsidies their taxes help fund.",
					"**Why now:** the current subsidy round closes next year (to verify).",
					"**Why earlier efforts fall short:** they were designed for owners, not tenants.",
				},
			},
		}},

		"methodology": {
			Text: `This plan delivers {solution} in 24 months, in five work packages.

- **WP1 — Set-up and agreements (months 1–4).** Contract the cooperative, sign roof-use agreements with the Housing Association and the Community Centre, agree the metering arrangement with the grid operator. *Output:* signed agreements and metering approval.
- **WP2 — Household enrolment (months 3–8).** Recruit about 120 low-income households with the Housing Association's tenant officers; record each household's baseline bills. *Output:* enrolment register with baselines.
- **WP3 — Installation (months 6–12).** Survey the roofs, tender, install and commission the 150 kWp array. *Output:* array in operation.
- **WP4 — Operation and credit sharing (months 12–24).** Operate the array, allocate the credits monthly, run a help desk for households. *Output:* monthly credit statements.
- **WP5 — Evaluation and replication (months 10–24).** Measure the results and publish a toolkit for other towns. *Output:* evaluation report and toolkit.

**Success measures**
- Household electricity bills at least 20 % lower, measured from bills against the WP2 baseline.
- At least 150 MWh generated in the first year of operation, read from the array's meter.
- At least 100 households enrolled and active at month 24, from the enrolment register.

**Main risks**
- *Metering approval delayed:* talks start in month 1; fallback: each building uses its own output.
- *Low enrolment:* recruitment goes through tenant officers whom tenants already trust.

Every work package serves the problem statement: WP1–WP4 bring cheap solar energy to the households it describes, and WP5 shows whether it worked.`,
			More: "**Governance:** a steering group of the Housing Association, the cooperative and two tenant representatives meets every quarter.",
		},

		"timeline": {
			Text: `| Work package | Start month | End month | Deliverable |
|---|---|---|---|
| WP1 Set-up and agreements | 1 | 4 | Signed agreements, metering approval |
| WP2 Household enrolment | 3 | 8 | Enrolment register with baselines |
| WP3 Installation | 6 | 12 | Array commissioned |
| WP4 Operation and credit sharing | 12 | 24 | Monthly credit statements |
| WP5 Evaluation and replication | 10 | 24 | Evaluation report, toolkit |

**Milestones**
- **M1 (month 4):** agreements signed and metering approved.
- **M2 (month 8):** 120 households enrolled, baselines recorded.
- **M3 (month 12):** array commissioned, first credits allocated.
- **M4 (month 24):** evaluation report and replication toolkit published.

WP2 overlaps WP1 because enrolment only needs the Housing Association's agreement, signed in month 2; WP3 starts once metering is approved in principle.`,
			More: "**Buffer:** month 12 of WP3 is kept free of planned work, to absorb a late delivery of panels.",
		},

		"budget": {
			Text: `| Category | Amount (EUR) | Justification |
|---|---|---|
| Staff | 96,000 | Project manager 0.5 FTE × 24 months (WP1–WP5) and community officer 0.5 FTE × 18 months (WP2, WP4) [assumption: 5,000 and 4,000 EUR/month full time, employer costs included] |
| Equipment | 165,000 | 150 kWp array with inverters and mounting (WP3) [assumption: 1,100 EUR/kWp installed] |
| Subcontracting | 24,000 | Roof surveys, 6,000 (WP1, WP3); independent evaluation, 18,000 (WP5) |
| Travel | 3,000 | Local travel for enrolment and two replication workshops (WP2, WP5) |
| Other direct costs | 7,000 | Grid connection and metering fees, printed materials (WP1, WP2, WP3) |
| Overheads | 20,650 | 7 % of the direct costs above |
| **Total** | **315,650** | |

All amounts are in EUR and exclude VAT; overheads are the 7 % line. Staff months match the timeline: the project manager for all 24 months, the community officer for enrolment (months 3–8) and the help desk (months 13–24).`,
			More: "**Co-funding:** the municipality's contribution [amount to confirm] would reduce the amount requested from the funder.",
		},

		"conclusion": {
			Text: `With {solution}, about 120 low-income tenant households in Millbrook will pay at least 20 % less for their electricity, from a 150 kWp array that generates at least 150 MWh a year and that their cooperative owns.

The partners are the ones these households already know: the Millbrook Housing Association, the Eastside Community Centre and the municipality, with a local energy cooperative running the array.

Over 24 months and for EUR 315,650, the funder's money pays for what neither the tenants nor their landlord can afford alone: the upfront investment. The toolkit published at month 24 lets other towns repeat the model.`,
			More: "After the grant, the array's income covers its operation, so the savings continue for its lifetime.",
		},
	},
}

// genericAngles are the options of an artifact the themes do not know: the same
// artifact seen from different angles.
var genericAngles = []struct{ title, text string }{
	{"Start small and concrete", "Start with the smallest version of {title} that still works: {description} Focus on the one case the team knows best, and extend it once it has proved itself."},
	{"Cover it broadly", "Cover {title} broadly: {description} Take in every case mentioned in the thread so that nothing is missed, at the cost of some depth."},
	{"Make it a bold bet", "Make {title} a bold bet: {description} Choose the most ambitious reading and commit to it, accepting more risk for a bigger result."},
	{"Lead with the evidence", "Build {title} on evidence: {description} Lead with what the team knows for sure and mark every assumption still to check."},
	{"Put people first", "Frame {title} around the people it affects: {description} Say what changes for them, in their own words."},
	{"Keep the cost down", "Keep {title} lean: {description} Prefer what the team can do with the people and budget it already has."},
	{"Think long term", "Shape {title} for the long run: {description} Favour what will still hold in two years over what is quickest now."},
	{"Borrow what works", "Base {title} on what already works elsewhere: {description} Adapt a proven pattern instead of inventing a new one."},
	{"Fastest to try", "Make {title} the quickest to try: {description} Pick what can be tested this week and learn from it."},
	{"Lowest risk", "Make {title} the safest choice: {description} Avoid anything the team cannot undo."},
}
