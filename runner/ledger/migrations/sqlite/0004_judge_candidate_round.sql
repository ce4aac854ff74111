-- 4: a judge request names the cell it judges: the tested model beside
-- test and repeat (model is the judge's), and the judging round.

ALTER TABLE requests ADD COLUMN candidate_model TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
