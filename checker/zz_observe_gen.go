package checker

// The checker needs the observation layer's sources at run time (it builds
// the learner's code together with them), so it embeds a copy, refreshed by
// `go generate ./checker` and kept honest by TestObserveCopyIsCurrent.
//go:generate sh -c "rm -rf _observe && mkdir _observe && cp ../operator/observe/*.go _observe/ && rm -f _observe/*_test.go"
