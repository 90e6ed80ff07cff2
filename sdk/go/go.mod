module github.com/strata-analytics/strata/sdk/go

go 1.22
