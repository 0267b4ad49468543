package conversation

// CriterionPlaceholders is the criterion every written artifact is checked against
// without a model: no template slot such as "[product]" is left in its text.
const CriterionPlaceholders = "no_placeholders"
