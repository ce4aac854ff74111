-- 2: why a run ended as it did (a failed run's reason).

ALTER TABLE runs ADD COLUMN message TEXT NOT NULL DEFAULT '';
