package analytics

import (
	"encoding/json"
	"strconv"
)

// Survey results (docs/messages.md, "Results"): a campaign's responses
// are read a page at a time (SurveyPageSize responses, at most about 5 MB
// of answers) and folded into a SurveyTally, so that neither the store nor
// the server ever holds every response of a survey at once, however many
// it has.

// SurveyPageSize is how many responses one read of the store returns. A
// response holds at most MaxCampaignSteps answers of at most
// MaxTextAnswer characters, about 80 KB, so a page stays under about
// 5 MB in the store and in the server whatever the survey's size.
const SurveyPageSize = 64

// SurveyQuestionResult is one question's answers in the results view.
type SurveyQuestionResult struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Prompt  string `json:"prompt"`
	Answers int    `json:"answers"`
	// Counts are the answers per value: every value of a scale and every
	// choice, in order, zeros included; none for text questions.
	Counts []SurveyCount `json:"counts"`
	// NPS is the net promoter score of an nps question with answers.
	NPS *NPSScore `json:"nps"`
	// Recent are the latest text answers, newest first, at most
	// SurveyRecentAnswers.
	Recent []string `json:"recent"`
}

// SurveyCount is how many answers gave one value.
type SurveyCount struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// NPSScore is % promoters (9–10) minus % detractors (0–6).
type NPSScore struct {
	Score      float64 `json:"score"`
	Promoters  int     `json:"promoters"`
	Passives   int     `json:"passives"`
	Detractors int     `json:"detractors"`
}

// SurveyRecentAnswers is how many of a text question's latest answers the
// results show.
const SurveyRecentAnswers = 20

// SurveyTally folds a campaign's responses, in the order they were given,
// into its results. Its memory is the questions' counts and the latest
// SurveyRecentAnswers text answers of each, whatever the number of
// responses added.
type SurveyTally struct {
	questions []Question
	responses int
	answers   []int
	counts    []map[string]int
	// recent is a ring of each text question's latest answers; next is
	// where its next answer goes.
	recent [][]string
	next   []int
}

// NewSurveyTally returns an empty tally of c's questions.
func NewSurveyTally(c Campaign) *SurveyTally {
	qs := c.Questions()
	t := &SurveyTally{questions: qs, answers: make([]int, len(qs)), counts: make([]map[string]int, len(qs)),
		recent: make([][]string, len(qs)), next: make([]int, len(qs))}
	for i := range qs {
		t.counts[i] = map[string]int{}
	}
	return t
}

// Add counts one response. Responses must come oldest first, for Recent.
func (t *SurveyTally) Add(r SurveyResponse) {
	t.responses++
	for _, a := range r.Answers {
		for i, q := range t.questions {
			if a.QuestionID != q.ID {
				continue
			}
			t.answers[i]++
			for _, v := range AnswerValues(a.Value) {
				if q.Type == QuestionText {
					if len(t.recent[i]) < SurveyRecentAnswers {
						t.recent[i] = append(t.recent[i], v)
					} else {
						t.recent[i][t.next[i]] = v
					}
					t.next[i] = (t.next[i] + 1) % SurveyRecentAnswers
					continue
				}
				t.counts[i][v]++
			}
		}
	}
}

// Responses returns how many responses were added.
func (t *SurveyTally) Responses() int { return t.responses }

// Results returns each question's results, in the campaign's order.
func (t *SurveyTally) Results() []SurveyQuestionResult {
	out := []SurveyQuestionResult{}
	for i, q := range t.questions {
		res := SurveyQuestionResult{ID: q.ID, Type: q.Type, Prompt: q.Prompt, Answers: t.answers[i], Counts: []SurveyCount{}, Recent: []string{}}
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
		for _, v := range values {
			res.Counts = append(res.Counts, SurveyCount{Value: v, Count: t.counts[i][v]})
		}
		// The ring, newest first.
		ring := t.recent[i]
		for k := range ring {
			res.Recent = append(res.Recent, ring[(t.next[i]-1-k+2*len(ring))%len(ring)])
		}
		if q.Type == QuestionNPS && res.Answers > 0 {
			var n NPSScore
			for v, k := range t.counts[i] {
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

// AnswerValues is a stored answer as text: one value, or each choice of a
// multiple-choice answer.
func AnswerValues(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	return []string{string(raw)}
}
