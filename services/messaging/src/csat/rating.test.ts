import { parseRating } from './rating';

describe('parseRating', () => {
  it('reads a digit 1-5, with /5, stars or a keycap, and the text after it as the comment', () => {
    expect(parseRating('5')).toEqual({ rating: 5, comment: null });
    expect(parseRating(' 4/5 ')).toEqual({ rating: 4, comment: null });
    expect(parseRating('3 stars')).toEqual({ rating: 3, comment: null });
    expect(parseRating('2️⃣')).toEqual({ rating: 2, comment: null });
    expect(parseRating('5 - quick and friendly')).toEqual({ rating: 5, comment: 'quick and friendly' });
    expect(parseRating('1. slow')).toEqual({ rating: 1, comment: 'slow' });
  });

  it('counts stars and reads the faces of the question', () => {
    expect(parseRating('⭐⭐⭐⭐')).toEqual({ rating: 4, comment: null });
    expect(parseRating('★★☆☆☆ meh')).toEqual({ rating: 2, comment: 'meh' });
    expect(parseRating('⭐️⭐️⭐️⭐️⭐️')).toEqual({ rating: 5, comment: null });
    expect(parseRating('😡')).toEqual({ rating: 1, comment: null });
    expect(parseRating('😞')).toEqual({ rating: 2, comment: null });
    expect(parseRating('😐')).toEqual({ rating: 3, comment: null });
    expect(parseRating('🙂 thanks')).toEqual({ rating: 4, comment: 'thanks' });
    expect(parseRating('😍')).toEqual({ rating: 5, comment: null });
  });

  it('takes a lone word of judgement', () => {
    expect(parseRating('Great!')).toEqual({ rating: 5, comment: null });
    expect(parseRating('ok')).toEqual({ rating: 3, comment: null });
  });

  it('refuses what is no rating', () => {
    for (const text of ['', '0', '6', '10', '3.5', '45 minutes', 'good morning, one more question', 'hello', '⭐⭐⭐⭐⭐⭐']) {
      expect(parseRating(text)).toBeNull();
    }
  });
});
