-- Survey responses are read a page at a time, by id within a campaign
-- (analytics.SurveyPageSize; docs/messages.md, "Results"): the index
-- carries the id, so that PostgreSQL reads each page from the index in
-- order instead of sorting the campaign's every response for each page.
DROP INDEX survey_responses_campaign;
CREATE INDEX survey_responses_page ON survey_responses (product_id, campaign_id, id);
