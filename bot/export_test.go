package bot

// Unexported helpers, for the tests of package bot_test.
var (
	EncodeValue = encodeValue
	DecodeValue = decodeValue
	CompareTS   = compareTS
)
