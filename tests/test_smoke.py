from flyswat import Game, Rules


def test_a_whole_game_can_be_played_to_its_end() -> None:
    game = Game.new(Rules(seats=4), seed="smoke")
    while not game.over:
        game.reveal()
        if game.round is not None:
            game.close_round()
    assert len(game.where()) == 112
    assert game.result().places
