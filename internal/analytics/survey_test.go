package analytics

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

// TestSurveyTally holds the tally, which sees responses once each, oldest
// first, equal to a plain reference that holds them all (the results view
// as it was computed before pages) on random surveys.
func TestSurveyTally(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	c := Campaign{ID: 1, Variants: []CampaignVariant{{Key: "control", Steps: []Step{
		{Kind: StepSurvey, Question: &Question{ID: "nps", Type: QuestionNPS, Prompt: "Recommend?"}},
		{Kind: StepSurvey, Question: &Question{ID: "stars", Type: QuestionRating, Scale: 5, Prompt: "Stars?"}},
		{Kind: StepSurvey, Question: &Question{ID: "pick", Type: QuestionSingle, Choices: []string{"a", "b", "c"}, Prompt: "Pick"}},
		{Kind: StepSurvey, Question: &Question{ID: "many", Type: QuestionMultiple, Choices: []string{"x", "y", "z"}, Prompt: "Many"}},
		{Kind: StepSurvey, Question: &Question{ID: "why", Type: QuestionText, Prompt: "Why?"}},
	}}}}
	for round := range 50 {
		var responses []SurveyResponse
		for i := range r.IntN(60) {
			var answers []SurveyAnswer
			add := func(id string, v any) {
				if r.IntN(4) > 0 {
					b, _ := json.Marshal(v)
					answers = append(answers, SurveyAnswer{QuestionID: id, Value: b})
				}
			}
			add("nps", r.IntN(11))
			add("stars", 1+r.IntN(5))
			add("pick", []string{"a", "b", "c"}[r.IntN(3)])
			var many []string
			for _, x := range []string{"x", "y", "z"} {
				if r.IntN(2) == 0 {
					many = append(many, x)
				}
			}
			add("many", many)
			add("why", fmt.Sprint("because ", round, " ", i))
			responses = append(responses, SurveyResponse{ID: int64(i + 1), Answers: answers})
		}
		tally := NewSurveyTally(c)
		for _, resp := range responses {
			tally.Add(resp)
		}
		if got, want := tally.Results(), referenceSurveyResults(c, responses); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d (%d responses):\n got %+v\nwant %+v", round, len(responses), got, want)
		}
		if tally.Responses() != len(responses) {
			t.Fatalf("round %d: %d responses, want %d", round, tally.Responses(), len(responses))
		}
	}
}

// referenceSurveyResults is the results view computed from every response
// at once, newest first.
func referenceSurveyResults(c Campaign, responses []SurveyResponse) []SurveyQuestionResult {
	out := []SurveyQuestionResult{}
	for _, q := range c.Questions() {
		res := SurveyQuestionResult{ID: q.ID, Type: q.Type, Prompt: q.Prompt, Counts: []SurveyCount{}, Recent: []string{}}
		var values []string
		switch q.Type {
		case QuestionRating:
			for v := 1; v <= q.Scale; v++ {
				values = append(values, strconv.Itoa(v))
			}
		case QuestionNPS:
			for v := 0; v <= 10; v++ {
				values = append(values, strconv.Itoa(v))
			}
		case QuestionText:
		default:
			values = q.Choices
		}
		count := map[string]int{}
		for i := len(responses) - 1; i >= 0; i-- {
			for _, a := range responses[i].Answers {
				if a.QuestionID != q.ID {
					continue
				}
				res.Answers++
				for _, v := range AnswerValues(a.Value) {
					count[v]++
					if q.Type == QuestionText && len(res.Recent) < SurveyRecentAnswers {
						res.Recent = append(res.Recent, v)
					}
				}
			}
		}
		for _, v := range values {
			res.Counts = append(res.Counts, SurveyCount{Value: v, Count: count[v]})
		}
		if q.Type == QuestionNPS && res.Answers > 0 {
			var n NPSScore
			for v, k := range count {
				switch x, _ := strconv.Atoi(v); {
				case x >= 9:
					n.Promoters += k
				case x >= 7:
					n.Passives += k
				default:
					n.Detractors += k
				}
			}
			n.Score = float64(100*(n.Promoters-n.Detractors)) / float64(res.Answers)
			res.NPS = &n
		}
		out = append(out, res)
	}
	return out
}
